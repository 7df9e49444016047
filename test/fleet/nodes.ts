/**
 * A fleet of real service processes for the fleet test and the fleet benches: each node is `npm start`'s process
 * (scripts/start.mjs, the CommonJS build) in its own process group, with its own TALON_HOME and port, and all of them
 * share one PostgreSQL database (TALON_DATABASE_URL), one data directory (TALON_DATA_DIR) and one secret key file
 * (TALON_SECRET_KEY_FILE), as deploy/ runs them. The scripted fake provider answers every node.
 * Every process is stopped by its group id: by stop(), and by an exit hook when a test fails before it gets there.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitFor } from '@talon/testing';
import { startScriptNodeArgs } from '../../bench/util.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
/** The environment variable the nodes' config names for the fake provider's key. */
const KEY_ENV = 'FLEET_FAKE_KEY';

export interface FleetNode {
  name: string;
  port: number;
  url: string;
  home: string;
  child: ChildProcess;
  /** The process's stdout and stderr (its log at log_level "warn"), kept to say why it failed. */
  output: string[];
  /** Whether the process is running (false once it exited). */
  up: boolean;
}

export interface FleetOptions {
  /** The shared PostgreSQL database; without it each node runs on SQLite in its home (a benchmark's baseline). */
  databaseUrl?: string;
  /** The fake provider's base URL (http://127.0.0.1:port). */
  providerUrl: string;
  /** More config.toml lines for every node (sections after the defaults). */
  config?: readonly string[];
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Every group a fleet of this process started, killed at exit if it is still there (a failed test, a thrown hook). */
const groups = new Set<number>();
process.once('exit', () => {
  for (const pid of groups) killGroup(pid, 'SIGKILL');
});

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** Builds `npm start`'s bundle once, so nodes started together do not each build it into the same file. */
export function buildOnce(): void {
  const built = spawnSync(process.execPath, ['scripts/start.mjs', '--build-only'], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  if (built.status !== 0) throw new Error(`scripts/start.mjs --build-only failed: ${built.stderr || built.stdout || built.error}`);
}

export class Fleet {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'talon-fleet-'));
  readonly dataDir = path.join(this.dir, 'data');
  readonly keyFile = path.join(this.dir, 'secret.key');
  readonly nodes = new Map<string, FleetNode>();

  readonly databaseUrl: string | undefined;

  constructor(private readonly options: FleetOptions) {
    this.databaseUrl = options.databaseUrl;
    mkdirSync(this.dataDir);
  }

  /** The config.toml of every node: quiet logs, no rate limit in the way of the driver, the fake provider. */
  private config(): string {
    return [
      'log_level = "warn"',
      'rate_limit_per_second = 1000000',
      '[default_model]',
      'provider = "openai"',
      'model = "fake-model"',
      `base_url = "${this.options.providerUrl}/v1"`,
      `api_key_env = "${KEY_ENV}"`,
      '[llm]',
      'max_retries = 0',
      ...(this.options.config ?? []),
      '',
    ].join('\n');
  }

  /** Starts a node (again, on its home and port, after a kill) and resolves once GET /api/health answers 200. */
  async start(name: string, timeoutMs = 90_000): Promise<FleetNode> {
    const known = this.nodes.get(name);
    const port = known?.port ?? (await freePort());
    const home = known?.home ?? path.join(this.dir, `home-${name}`);
    if (!known) {
      mkdirSync(home);
      writeFileSync(path.join(home, 'config.toml'), this.config());
    }
    const child = spawn(process.execPath, [...startScriptNodeArgs(), 'scripts/start.mjs'], {
      cwd: root,
      env: {
        ...process.env,
        TALON_HOME: home,
        TALON_API_LISTEN: `127.0.0.1:${port}`,
        ...(this.options.databaseUrl && { TALON_DATABASE_URL: this.options.databaseUrl }),
        TALON_DATA_DIR: this.dataDir,
        TALON_SECRET_KEY_FILE: this.keyFile,
        [KEY_ENV]: 'sk-fleet',
      },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    groups.add(child.pid!);
    const output: string[] = [];
    const keep = (chunk: Buffer) => output.push(chunk.toString());
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const node: FleetNode = { name, port, url: `http://127.0.0.1:${port}`, home, child, output, up: true };
    child.once('exit', () => {
      node.up = false;
      groups.delete(child.pid!);
    });
    this.nodes.set(name, node);
    await waitFor(
      async () => {
        if (!node.up) throw new Error(`it exited with ${child.exitCode ?? child.signalCode}`);
        return (await fetch(`${node.url}/api/health`)).status === 200;
      },
      timeoutMs,
      `node ${name} to answer`,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; output: ${output.join('').slice(-3000)}`);
    });
    return node;
  }

  /** Sends a signal to a node's process group; resolves once it exited. */
  async kill(name: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const node = this.nodes.get(name);
    if (!node?.up) return;
    const exited = new Promise((resolve) => node.child.once('exit', resolve));
    killGroup(node.child.pid!, signal);
    const timer = setTimeout(() => killGroup(node.child.pid!, 'SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  /** Stops every node (SIGTERM, SIGKILL after 10 s) and removes the fleet's folder. */
  async stop(): Promise<void> {
    await Promise.all([...this.nodes.keys()].map((name) => this.kill(name, 'SIGTERM')));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface Answer<T> {
  status: number;
  body: T;
}

/** A JSON request to a node (POST when a body is given). */
export async function call<T>(node: FleetNode, pathname: string, json?: unknown, method = json === undefined ? 'GET' : 'POST'): Promise<Answer<T>> {
  const res = await fetch(`${node.url}${pathname}`, {
    method,
    headers: json === undefined ? {} : { 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: the text itself
  }
  return { status: res.status, body: body as T };
}

/** Spawns an agent on the fake provider's default model; its id. */
export async function spawnAgent(node: FleetNode, name: string): Promise<string> {
  const manifest = `name = "${name}"\n[model]\nprovider = "default"\nmodel = "default"\n`;
  const res = await call<{ agent_id: string; error?: string }>(node, '/api/agents', { manifest_toml: manifest });
  if (res.status !== 201) throw new Error(`spawn ${name} on ${node.name}: ${res.status} ${res.body.error ?? JSON.stringify(res.body)}`);
  return res.body.agent_id;
}

/** The text of the last user message of a provider request (how the fake's requests are told apart). */
export function lastUserText(body: Record<string, unknown>): string {
  const messages = (body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const user = messages.filter((m) => m.role === 'user').at(-1);
  return typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content ?? '');
}

export interface SseEvent {
  name: string;
  data: Record<string, unknown>;
}

/**
 * Reads an SSE response's events until the server closes it (`ended`), the connection breaks (`broken`: its node
 * died) or `timeoutMs` passes (neither). `onEvent` sees each event as it arrives.
 */
export async function readSse(
  res: Response,
  timeoutMs: number,
  onEvent?: (event: SseEvent) => void,
): Promise<{ events: SseEvent[]; ended: boolean; broken: boolean }> {
  const events: SseEvent[] = [];
  const reader = res.body!.getReader();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void reader.cancel().catch(() => undefined);
  }, timeoutMs);
  const decoder = new TextDecoder();
  let buffered = '';
  let ended = false;
  let broken = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const name = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (data === undefined) continue;
        const event = { name, data: JSON.parse(data) as Record<string, unknown> };
        events.push(event);
        onEvent?.(event);
      }
    }
    ended = true;
  } catch {
    // The connection broke (its node died) or the timeout cancelled it.
    broken = true;
  } finally {
    clearTimeout(timer);
  }
  return { events, ended: ended && !timedOut, broken };
}
