/**
 * Audio probing and conversion on this host, for the media kit (drivers), the service and channels: `which` finds
 * the host's programs, `probe` measures a file (headers in TypeScript, ffprobe for the rest), `convert` re-encodes
 * with ffmpeg. Real subprocesses without a shell, each killed when its time is up.
 */
export { which } from './which.ts';
export { probe } from './probe.ts';
export { convert } from './convert.ts';
export { runChecked, withTempDir } from './exec.ts';
export { parseHeaders, wavFormat } from './headers/index.ts';
