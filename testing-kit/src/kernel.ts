import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kernel, type KernelOptions } from '../../kernel/kernel.ts';

export interface TestKernel {
  kernel: Kernel;
  /** Every log line (JSON text) written since the kernel started. */
  logLines(): string[];
  url: string;
  home: string;
  /** fetch() against the kernel, with the path relative to its URL. */
  request(pathname: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  stop(): Promise<void>;
}

export interface TestKernelOptions extends Pick<KernelOptions, 'only' | 'dev' | 'modulesDir' | 'settleMs' | 'heartbeatMs' | 'feedPollMs'> {
  /** config.toml contents (api_listen and log_level are added unless given); null: no file, a first start. */
  config?: string | null;
  /** Reuse a home (to test persistence across restarts). */
  home?: string;
  keepHome?: boolean;
}

/**
 * Boots a kernel in-process on a free loopback port in a temporary home, with
 * a chosen set of modules. Call stop() in an after() hook.
 */
export async function startTestKernel(options: TestKernelOptions = {}): Promise<TestKernel> {
  const home = options.home ?? mkdtempSync(path.join(tmpdir(), 'talon-test-'));
  const file = path.join(home, 'config.toml');
  // A reused home keeps its config.toml (restart tests) unless a new one is given.
  if (options.config !== null && (options.config !== undefined || !existsSync(file))) {
    let config = options.config ?? '';
    if (!/^\s*api_listen\s*=/m.test(config)) config = `api_listen = "127.0.0.1:0"\n${config}`;
    if (!/^\s*log_level\s*=/m.test(config)) config = `log_level = "${process.env.TALON_TEST_LOG ?? 'silent'}"\n${config}`;
    writeFileSync(file, config);
  }
  const { only, dev, modulesDir, settleMs, heartbeatMs, feedPollMs } = options;
  const listen = options.config === null ? '127.0.0.1:0' : undefined;
  const kernel = new Kernel({ home, only, dev, modulesDir, listen, settleMs, heartbeatMs, feedPollMs, stdout: Boolean(process.env.TALON_TEST_LOG) });
  try {
    await kernel.start();
  } catch (err) {
    await kernel.stop().catch(() => undefined);
    if (!options.keepHome && !options.home) rmSync(home, { recursive: true, force: true });
    throw err;
  }
  const url = `http://127.0.0.1:${kernel.port}`;
  const lines: string[] = [];
  kernel.hooks.kernel.log.line.tap('test-kernel', (line) => void lines.push(line));
  lines.unshift(...kernel.earlyLogLines());
  return {
    kernel,
    logLines: () => lines,
    url,
    home,
    request(pathname, init = {}) {
      const { json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (json !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
      return fetch(url + pathname, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
    },
    async stop() {
      await kernel.stop('test');
      if (!options.keepHome && !options.home) rmSync(home, { recursive: true, force: true });
    },
  };
}
