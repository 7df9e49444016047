import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import { simpleGit } from 'simple-git';
const run = promisify(execFile);
const env = { PATH: process.env.PATH!, GIT_DIR: '/tmp/p2/sh', GIT_WORK_TREE: '/tmp/p2/ws', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
const args = ['update-index', '--add', '--remove', '--', 'f0', 'f1', 'f2', 'f3', 'f4'];
const med = (v: number[]) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)].toFixed(1);
for (let round = 0; round < 2; round++) {
  const a: number[] = [], b: number[] = [], c: number[] = [];
  for (let i = 0; i < 15; i++) {
    writeFileSync('/tmp/p2/ws/f1', `${i}`);
    let s = performance.now();
    await run('git', args, { env, cwd: '/tmp/p2/sh' });
    a.push(performance.now() - s);
    writeFileSync('/tmp/p2/ws/f1', `${i}b`);
    s = performance.now();
    await simpleGit({ baseDir: '/tmp/p2/sh', unsafe: { allowUnsafeConfigPaths: true } }).env(env).raw(args);
    b.push(performance.now() - s);
    s = performance.now();
    await run('git', ['rev-parse', 'HEAD'], { env, cwd: '/tmp/p2/sh' }).catch(() => 0);
    c.push(performance.now() - s);
  }
  console.log('execFile', med(a), 'simple-git', med(b), 'execFile rev-parse', med(c));
}
