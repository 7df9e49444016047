/**
 * A real MQTT broker for tests: Debian's mosquitto on 127.0.0.1, configured in a temp folder with a password file
 * (mosquitto_passwd) and no anonymous access, persistence on so a restart keeps persistent sessions and the QoS 1
 * messages queued for them (what a broker restart must not lose), in the foreground as an unprivileged user and
 * stopped by its pid.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, LOOPBACK, missingBinary, runServer, serverDir, serverIdentity, type RunningServer } from './process.ts';

const MOSQUITTO = '/usr/sbin/mosquitto';
const MOSQUITTO_PASSWD = '/usr/bin/mosquitto_passwd';

/** Why an MQTT test cannot run here (one line naming the package), or undefined when mosquitto is installed. */
export function mqttServerMissing(): string | undefined {
  return missingBinary(MOSQUITTO, 'mosquitto') ?? missingBinary(MOSQUITTO_PASSWD, 'mosquitto-clients');
}

export interface MqttServerOptions {
  /** The accounts (user name → password) the broker accepts; anonymous clients are refused. */
  users: Record<string, string>;
}

export interface MqttServer {
  host: string;
  port: number;
  /** mqtt://127.0.0.1:<port> */
  url: string;
  pid(): number;
  /** Stops the broker (it saves its sessions) and starts it again on the same port with the same state. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startMqttServer(options: MqttServerOptions): Promise<MqttServer> {
  const missing = mqttServerMissing();
  if (missing) throw new Error(missing);
  const dir = serverDir('mosquitto');
  const port = await freePort();
  const { uid, gid, root } = serverIdentity();
  const data = path.join(dir, 'data');
  mkdirSync(data);
  const passwords = path.join(dir, 'passwd');
  writeFileSync(passwords, '', { mode: 0o600 });
  for (const [user, password] of Object.entries(options.users)) execFileSync(MOSQUITTO_PASSWD, ['-b', passwords, user, password], { stdio: 'ignore' });
  if (root) for (const p of [data, passwords]) chownSync(p, uid, gid);
  const confFile = path.join(dir, 'mosquitto.conf');
  const conf = [
    `listener ${port} ${LOOPBACK}`,
    'allow_anonymous false',
    `password_file ${passwords}`,
    'persistence true',
    `persistence_location ${data}/`,
    // Saved on shutdown only: a restart by SIGTERM keeps every session and queued message.
    'autosave_interval 0',
    'log_dest stderr',
    'log_type error',
    'log_type warning',
    '',
  ].join('\n');
  writeFileSync(confFile, conf, { mode: 0o644 });

  // runServer removes the folder it is given when the server stops: each run gets its own, the state stays in `dir`.
  const run = () => {
    const runDir = mkdtempSync(path.join(dir, 'run-'));
    if (root) chownSync(runDir, uid, gid);
    return runServer({ name: 'mosquitto', command: MOSQUITTO, args: ['-c', confFile], port, dir: runDir });
  };
  let server: RunningServer = await run();
  return {
    host: LOOPBACK,
    port,
    url: `mqtt://${LOOPBACK}:${port}`,
    pid: () => server.pid,
    async restart() {
      await server.stop();
      server = await run();
    },
    async stop() {
      await server.stop();
      // The state folder, once the broker is gone.
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
