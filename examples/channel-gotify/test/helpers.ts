import path from 'node:path';

// Loaded the way a user loads a third-party module: module_paths names the folder that holds it.
const examples = path.resolve(import.meta.dirname, '../..');
export const CONFIG = `module_paths = [${JSON.stringify(examples)}]\n`;
export const MODULES = ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-gotify'];

/** Applications 101..140 talk to the agent directly; the others are feeds (groups). */
export const dmApp = (n: number) => 100 + n;
export const groupApp = (n: number) => 200 + n;
export const DIRECT_APPS = Array.from({ length: 40 }, (_, i) => String(dmApp(i + 1)));
