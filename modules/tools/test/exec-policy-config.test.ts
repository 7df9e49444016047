/** The reference system's top-level [exec_policy] table is read (merged into [tools.exec_policy], which wins per key). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestKernel } from '@talon/testing';

test("the reference's top-level [exec_policy] applies: mode, allowed_commands, allowed_env_vars; [tools.exec_policy] wins per key", async () => {
  process.env.TALON_EXEC_POLICY_TEST = 'passed-through';
  const k = await startTestKernel({
    only: ['tools', 'error-envelope'],
    config: [
      'log_level = "warn"',
      '[exec_policy]',
      'mode = "allowlist"',
      'allowed_commands = ["ls*"]',
      'allowed_env_vars = ["TALON_EXEC_POLICY_TEST"]',
      'timeout_secs = 7',
      '[tools.exec_policy]',
      'timeout_secs = 9',
      '[tool_invoke]',
      'enabled = true',
      'allowlist = ["shell_exec"]',
      '',
    ].join('\n'),
  });
  try {
    const spawn = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: 'name = "sh"\n[capabilities]\ntools = ["*"]\nshell = ["*"]\n' } });
    const { agent_id } = (await spawn.json()) as { agent_id: string };
    const run = async (command: string) => {
      const res = await k.request(`/api/tools/shell_exec/invoke?agent_id=${agent_id}`, { method: 'POST', json: { command } });
      assert.equal(res.status, 200);
      return ((await res.json()) as { content: string }).content;
    };
    assert.match(await run('ls -a'), /^Exit code: 0/, 'allowed_commands joins the allowlist');
    assert.match(await run('id'), /not allowed by the exec policy \(mode = 'allowlist'\)/, 'mode from [exec_policy]');
    const env = await run('env');
    assert.match(env, /^TALON_EXEC_POLICY_TEST=passed-through$/m, 'allowed_env_vars are passed through');
    assert.match(env, /^PATH=/m, 'added to the default passthrough');
    assert.ok(
      k
        .logLines()
        .some((l) => l.includes("both 'exec_policy.timeout_secs' and 'tools.exec_policy.timeout_secs' are set; using 'tools.exec_policy.timeout_secs'")),
      'the conflict is named in a warning',
    );
  } finally {
    delete process.env.TALON_EXEC_POLICY_TEST;
    await k.stop();
  }
});
