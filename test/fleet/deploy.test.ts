/**
 * deploy/'s balancer configurations are valid for the balancers themselves: `haproxy -c -f deploy/haproxy.cfg` and
 * `nginx -t -c deploy/nginx.conf`, each skipped with one line when that balancer is not installed. The node ports they
 * send to are the ones deploy/talon@.service and deploy/Procfile give the three nodes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const deploy = path.resolve(import.meta.dirname, '..', '..', 'deploy');
const read = (name: string) => readFileSync(path.join(deploy, name), 'utf8');
const installed = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;

test('haproxy accepts deploy/haproxy.cfg', { skip: installed('haproxy') ? undefined : 'haproxy is not installed (apt-get install haproxy)' }, () => {
  const check = spawnSync('haproxy', ['-c', '-f', path.join(deploy, 'haproxy.cfg')], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(check.status, 0, check.stderr + check.stdout);
});

test('nginx accepts deploy/nginx.conf', { skip: installed('nginx') ? undefined : 'nginx is not installed (apt-get install nginx-light)' }, () => {
  const check = spawnSync('nginx', ['-t', '-c', path.join(deploy, 'nginx.conf')], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(check.status, 0, check.stderr + check.stdout);
});

test('the balancers send to the ports the systemd unit and the Procfile give the nodes', () => {
  const unit = /TALON_API_LISTEN=127\.0\.0\.1:454%i/.test(read('talon@.service'));
  assert.ok(unit, 'talon@.service: instance N listens on 127.0.0.1:454N');
  const procfile = [...read('Procfile').matchAll(/TALON_API_LISTEN=(127\.0\.0\.1:\d+)/g)].map((m) => m[1]);
  const nodes = ['127.0.0.1:4541', '127.0.0.1:4542', '127.0.0.1:4543'];
  assert.deepEqual(procfile, nodes);
  assert.deepEqual(
    [...read('haproxy.cfg').matchAll(/^\s*server node\d (\S+) check/gm)].map((m) => m[1]),
    nodes,
  );
  assert.deepEqual(
    [...read('nginx.conf').matchAll(/^\s*server (127\.0\.0\.1:\d+) /gm)].map((m) => m[1]),
    nodes,
  );
});
