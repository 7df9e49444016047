import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestKernel, type TestKernel } from '@talon/testing';

let k: TestKernel;
const skillsDir = mkdtempSync(path.join(tmpdir(), 'commands-skills-'));

before(async () => {
  mkdirSync(path.join(skillsDir, 'summarize'));
  writeFileSync(path.join(skillsDir, 'summarize', 'SKILL.md'), '---\nname: summarize\ndescription: Summarise a text\n---\nSummarise what you are given.\n');
  k = await startTestKernel({ only: ['commands', 'skills', 'error-envelope'], config: `[skills]\ndir = ${JSON.stringify(skillsDir)}\n` });
});
after(async () => {
  await k?.stop();
  rmSync(skillsDir, { recursive: true, force: true });
});

test('commands: the chat commands, then one per skill; one by name, slash optional, any case', async () => {
  const res = await k.request('/api/commands');
  assert.equal(res.status, 200);
  const body = (await res.json()) as { commands: Array<{ cmd: string; source: string; desc: string }>; total: number };
  assert.ok(['/new', '/compact', '/model', '/stop', '/usage', '/think', '/models', '/providers'].every((c) => body.commands.some((x) => x.cmd === c)));
  const skill = body.commands.find((c) => c.cmd === '/summarize');
  assert.equal(skill?.source, 'skill');
  assert.equal(skill?.desc, 'Summarise a text');
  assert.equal(body.total, body.commands.length);
  for (const name of ['model', '%2Fmodel', 'MODEL']) {
    const one = await k.request(`/api/commands/${name}`);
    assert.equal(one.status, 200, name);
    assert.equal(((await one.json()) as { cmd: string }).cmd, '/model');
  }
  const missing = await k.request('/api/commands/nope');
  assert.equal(missing.status, 404);
  assert.match(((await missing.json()) as { error: string }).error, /'\/nope' not found/);
});
