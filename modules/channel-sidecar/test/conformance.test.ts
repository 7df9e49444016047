/**
 * The shared channel conformance suite for the sidecar adapter, running our Node sidecar (fixtures/sidecar.mjs) in
 * the subprocess sandbox against the test platform (platform.ts). DM `n` is the chat `dm<n>`, group `n` is `g<n>`
 * (mentions in metadata.was_mentioned, as the reference's adapters report them). Protocol v1 has no send result, so
 * a 429 cannot reach the supervisor: that case is skipped. A dropped connection makes the sidecar exit; the
 * supervisor restarts it and the platform's queued messages arrive once.
 */
import { fileURLToPath } from 'node:url';
import { channelConformance } from '@talon/testing';
import { SIDECAR_MAX_LENGTH } from '../services/adapter.ts';
import { startSidecarPlatform } from './platform.ts';

const fixture = fileURLToPath(new URL('./fixtures/sidecar.mjs', import.meta.url));

channelConformance({
  name: 'channel-sidecar',
  channel: 'sidecar',
  only: ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'tools', 'channels', 'channel-sidecar'],
  limits: { maxLength: SIDECAR_MAX_LENGTH, unit: 'utf16' },
  async harness() {
    const platform = await startSidecarPlatform();
    return {
      configure: {
        command: process.execPath,
        args: [fixture],
        env: [`PLATFORM_PORT=${platform.port}`, `EXPECTED_TOKEN=${platform.token}`],
        channel_type: 'fixture',
        token_env: 'FIXTURE_TOKEN',
        token: platform.token,
        restart_initial_backoff_ms: 100,
      },
      badCredentials: { token: 'not-the-fixture-token' },
      dm: (n, text) => platform.message(`dm${n}`, text),
      group: (n, text, { mentioned, thread }) =>
        platform.message(`g${n}`, text, { is_group: true, metadata: { was_mentioned: mentioned }, ...(thread ? { thread_id: thread } : {}) }),
      thread: (n) => `t${n}`,
      received: (target) => ('dm' in target ? platform.sent(`dm${target.dm}`, target.thread) : platform.sent(`g${target.group}`, target.thread)),
      typings: (n) => platform.count('typing', `dm${n}`),
      dmChat: (n) => `dm${n}`,
      dropConnection: () => platform.drop(),
      stop: () => platform.stop(),
    };
  },
});
