/**
 * A service process for video.test.ts's kill -9 case: a test kernel with the media module and the scripted driver on
 * the home given in argv[2], which prints `READY <url>` and runs until it is killed. Not a test file itself.
 */
import { startTestKernel } from '@talon/testing';
import { videoKernelOptions } from './video-setup.ts';

const home = process.argv[2];
if (!home) throw new Error('usage: video-child.ts <home>');
const k = await startTestKernel({ ...videoKernelOptions(), home });
process.stdout.write(`READY ${k.url}\n`);
setInterval(() => undefined, 60_000);
