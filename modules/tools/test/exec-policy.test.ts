import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkCommand } from '../services/exec-policy.ts';
import { parseShellLine } from '../services/shell-words.ts';
import { DEFAULT_SAFE_BINS } from '../config.ts';

const policy = (mode: 'deny' | 'allowlist' | 'full' | 'unrestricted' | 'none', allowlist: string[] = []) => ({ mode, allowlist, safe_bins: DEFAULT_SAFE_BINS });
const allowed = (cmd: string, p = policy('allowlist'), caps = ['*']) => checkCommand(cmd, p, caps).allowed;

describe('shell command parsing', () => {
  it('splits at unquoted control operators and keeps quoted ones', () => {
    const p = parseShellLine(`echo 'a;b' "c|d" && cat x | wc -l; date`);
    assert.deepEqual(p.commands, [['echo', 'a;b', 'c|d'], ['cat', 'x'], ['wc', '-l'], ['date']]);
    assert.deepEqual(p.substitutions, []);
  });
  it('reports command and process substitution, also inside double quotes, not in single quotes', () => {
    assert.deepEqual(parseShellLine('echo "$(id)"').substitutions, ['$(']);
    assert.deepEqual(parseShellLine('echo `id`').substitutions, ['`', '`']);
    assert.deepEqual(parseShellLine('diff <(ls) x').substitutions, ['<(']);
    assert.deepEqual(parseShellLine("echo '$(id)'").substitutions, []);
    assert.ok(parseShellLine("echo 'open").error);
  });
});

describe('exec policy decision', () => {
  it('deny mode (and its alias none) refuses everything', () => {
    assert.equal(allowed('echo hi', policy('deny')), false);
    assert.equal(allowed('echo hi', policy('none')), false);
  });
  it('an empty capabilities.shell refuses everything', () => {
    const v = checkCommand('echo hi', policy('full'), []);
    assert.equal(v.allowed, false);
    assert.match((v as { reason: string }).reason, /capabilities\.shell is empty/);
  });
  it('allowlist mode allows safe bins in pipelines and refuses anything else', () => {
    assert.equal(allowed('echo hi | wc -c && date; cat a.txt | sort | uniq'), true);
    assert.equal(allowed('FOO=1 echo hi > out.txt'), true);
    assert.equal(allowed('rm -rf /'), false);
    assert.equal(allowed('echo ok; rm -rf /'), false);
    assert.equal(allowed('echo ok && curl http://x'), false);
    assert.equal(allowed('/tmp/evil/cat x'), false, 'a path is not the safe bin');
    assert.equal(allowed('echo $(rm -rf /)'), false);
    assert.equal(allowed('echo `rm -rf /`'), false);
  });
  it('wrappers such as env are judged by the command they run', () => {
    assert.equal(allowed('env'), true);
    assert.equal(allowed('env rm -rf /'), false);
    assert.equal(allowed('env FOO=1 echo hi'), true);
    assert.equal(allowed('timeout 5 rm x'), false);
    assert.equal(allowed('sort --compress-program=sh a.txt'), false, 'a safe bin option that runs a program');
  });
  it('allowlist globs extend the safe bins', () => {
    const p = policy('allowlist', ['git *', 'node']);
    assert.equal(allowed('git log --oneline', p), true);
    assert.equal(allowed('node', p), true);
    assert.equal(allowed('npm install', p), false);
  });
  it('full mode allows anything when capabilities.shell is ["*"]', () => {
    assert.equal(allowed('rm -rf build && curl x | sh', policy('full')), true);
    assert.equal(allowed('echo $(id)', policy('unrestricted')), true);
  });
  it('manifest shell globs restrict every simple command, even in full mode', () => {
    const caps = ['git *', 'echo *'];
    assert.equal(allowed('git status && echo done', policy('full'), caps), true);
    assert.equal(allowed('git status; rm -rf /', policy('full'), caps), false);
    assert.equal(allowed('ls', policy('full'), caps), false);
    assert.equal(allowed('echo $(rm -rf /)', policy('full'), caps), false, 'substitution hides commands from the globs');
    assert.equal(allowed('git status', policy('allowlist'), caps), false, 'both the policy and the manifest must agree');
  });
});
