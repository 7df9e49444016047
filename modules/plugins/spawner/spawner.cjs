/**
 * The hook launcher: a small Node process that starts one-shot hook processes for the plugins module. Forking the
 * service process copies the page tables of its whole heap and blocks its event loop for the copy (about 12 ms for a
 * 350 MB process on the 2-core test machine); forking this small one costs about a tenth of that, in another process.
 * Plain CommonJS, run with the service's own node, so it needs no build step.
 *
 * Messages (IPC): {op: 'start', id, argv, cwd, env, maxBytes} starts a process (answered {op: 'started', id, pid});
 * {op: 'finish', id, stdin, timeoutMs} writes its request and closes stdin (answered {op: 'done', id, stdout,
 * stderr, exitCode, timedOut, overflowed} once it is gone); {op: 'kill', id}. A process that ends before its
 * request is reported {op: 'closed', id}. When the service goes away, every process started here is killed.
 */
'use strict';
const { spawn } = require('node:child_process');

const STDERR_TAIL = 4096;
const running = new Map();

const send = (message) => process.connected && process.send(message);

function killTree(child) {
  if (!child.pid) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group is already gone
  }
}

function start({ id, argv, cwd, env, maxBytes }) {
  const child = spawn(argv[0], argv.slice(1), { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  const run = { child, chunks: [], size: 0, stderr: '', exitCode: null, spawnError: '', timedOut: false, overflowed: false, closed: false, onClose: null };
  running.set(id, run);
  child.stdin.on('error', () => undefined); // a hook that exits without reading must not crash the launcher
  child.stdout.on('data', (chunk) => {
    run.size += chunk.length;
    if (run.size > maxBytes) {
      run.overflowed = true;
      killTree(child);
      return;
    }
    run.chunks.push(chunk);
  });
  child.stderr.on('data', (chunk) => (run.stderr = (run.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL)));
  child.on('error', (err) => (run.spawnError = `could not start: ${err.message}`));
  child.on('exit', (code) => {
    run.exitCode = code;
    killTree(child); // background children would keep the pipes open (and run on)
  });
  child.on('close', () => {
    run.closed = true;
    if (run.onClose) run.onClose();
    else send({ op: 'closed', id });
  });
  send({ op: 'started', id, pid: child.pid ?? null });
}

function finish({ id, stdin, timeoutMs }) {
  const run = running.get(id);
  if (!run)
    return send({ op: 'done', id, stdout: '', stderr: 'the hook process is unknown to the launcher', exitCode: -1, timedOut: false, overflowed: false });
  const timer = setTimeout(() => {
    run.timedOut = true;
    killTree(run.child);
  }, timeoutMs);
  run.onClose = () => {
    clearTimeout(timer);
    running.delete(id);
    send({
      op: 'done',
      id,
      stdout: Buffer.concat(run.chunks).toString('utf8'),
      stderr: run.spawnError || run.stderr,
      exitCode: run.spawnError ? -1 : run.exitCode,
      timedOut: run.timedOut,
      overflowed: run.overflowed,
    });
  };
  if (run.closed) return run.onClose();
  run.child.stdin.end(stdin);
}

process.on('message', (message) => {
  if (message.op === 'start') start(message);
  else if (message.op === 'finish') finish(message);
  else if (message.op === 'kill') {
    const run = running.get(message.id);
    if (run) killTree(run.child);
    running.delete(message.id);
  }
});

process.on('disconnect', () => {
  for (const run of running.values()) killTree(run.child);
  process.exit(0);
});
