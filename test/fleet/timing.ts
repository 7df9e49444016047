/**
 * Timing helpers of the fleet benches (bench/fleet-*.ts): a keep-alive client that times each request to its last
 * byte, and the CPU time of a PostgreSQL server with its backends (Linux /proc).
 */
import http from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { cpuMs } from '../../bench/util.ts';

/** A client of one node: its own keep-alive connections (node:http, as a client library would). */
export function timedClient(maxSockets = 1) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const call = (url: string, method = 'GET', body?: unknown): Promise<{ status: number; text: string; ms: number }> => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const started = performance.now();
      const headers = payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
      const req = http.request(url, { method, agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  };
  return { call, close: () => agent.destroy() };
}

/** CPU ms (user + system) of a process and every process whose parent it is (a postmaster and its backends). */
export function treeCpuMs(pid: number): number {
  let total = cpuMs(pid);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) total += cpuMs(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}
