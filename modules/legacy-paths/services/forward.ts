/**
 * Two kinds of alias. `reroute` hands the untouched request (body not yet read, stream and all) to the router
 * under the target's method and path: the target runs with every hook as if called directly, so streams
 * (attach) keep streaming. `relay` is for aliases whose body differs: it calls the target in-process with the
 * caller's credentials and a rewritten body, and answers what it answered.
 */
import type { FastifyReply, FastifyRequest, Routes } from '@talon/module-sdk';

/** Headers that carry who the caller is and how to answer; nothing else crosses into a relayed call. */
const PASSED = ['authorization', 'cookie', 'accept', 'x-request-id'];

export function reroute(app: Routes, request: FastifyRequest, reply: FastifyReply, method: string, url: string): void {
  const raw = request.raw;
  raw.method = method;
  raw.url = url;
  // The target answers under the same request id.
  raw.headers['x-request-id'] = String(request.id);
  reply.hijack();
  app.routing(raw, reply.raw);
}

type Call = { method: 'GET' | 'POST' | 'PUT' | 'DELETE'; url: string; body?: unknown };

/** Calls another route in-process with the caller's credentials. */
export function inject(request: FastifyRequest, call: Call) {
  const headers: Record<string, string> = {};
  for (const name of PASSED) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  return request.server.inject({ method: call.method, url: call.url, headers, payload: call.body === undefined ? undefined : JSON.stringify(call.body) });
}

/** Answers what the target answered. */
export function answer(reply: FastifyReply, res: Awaited<ReturnType<typeof inject>>) {
  const type = res.headers['content-type'];
  if (typeof type === 'string') reply.header('content-type', type);
  return reply.code(res.statusCode).send(res.body);
}

export async function relay(request: FastifyRequest, reply: FastifyReply, call: Call) {
  return answer(reply, await inject(request, call));
}
