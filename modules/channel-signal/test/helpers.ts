// What the Signal adapter's tests share: the modules a kernel needs, and numbers and groups on the fake per test number.
import type { SignalFake } from '@talon/testing';

export const MODULES = ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-signal'];

export const person = (n: number) => `+1555${String(1000 + n).padStart(7, '0')}`;
export const groupOf = (n: number) => Buffer.from(`group-${n}`.padEnd(32, '.')).toString('base64');

export const configureFor = (fake: SignalFake) => ({ api_url: fake.url, number: fake.number, ...(fake.token ? { token: fake.token } : {}) });
export const dmTexts = (fake: SignalFake, n: number) => fake.sent.filter((s) => s.recipient?.includes(person(n)) && s.message).map((s) => s.message);
