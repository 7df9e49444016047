import { HttpError } from '@talon/module-sdk';
import type { ToolOutput } from '@talon/agents';

export const ok = (content: string): ToolOutput => ({ content, isError: false });
export const fail = (content: string): ToolOutput => ({ content, isError: true });

/** Turns what a tool threw into an error result: tools report failures, they never throw. */
export function failFrom(err: unknown, prefix = ''): ToolOutput {
  const message = err instanceof HttpError || err instanceof Error ? err.message : String(err);
  return fail(prefix ? `${prefix}: ${message}` : message);
}

/** Reads an optional string argument; undefined when absent, throws when of another type. */
export function optionalString(input: Record<string, unknown>, key: string): string | undefined {
  const v = input[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new TypeError(`'${key}' must be a string`);
  return v;
}

export function requiredString(input: Record<string, unknown>, key: string, tool: string): string {
  const v = optionalString(input, key);
  if (v === undefined || v.trim() === '') throw new TypeError(`${tool} requires a non-empty '${key}' string`);
  return v;
}

export function optionalInt(input: Record<string, unknown>, key: string): number | undefined {
  const v = input[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new TypeError(`'${key}' must be a non-negative integer`);
  return v;
}

export function optionalStringList(input: Record<string, unknown>, key: string): string[] {
  const v = input[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new TypeError(`'${key}' must be an array of strings`);
  return v as string[];
}
