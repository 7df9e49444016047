import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { mediaConformance, sampleWav, waitFor, type MediaCapability } from '@talon/testing';
import type { MediaDriver, MediaDriverKit, SpeechRequest, TranscribeRequest } from '@talon/media';
import { driverWith, has, NO_POCKETSPHINX, NO_SYSTEM_ENGINES, PARAGRAPH, SENTENCE, withOnly, wordAccuracy } from './helpers.ts';

const signal = new AbortController().signal;
const speech = (text: string, more: Partial<SpeechRequest> = {}): SpeechRequest => ({ text, signal, ...more });
const heard = (audio: Buffer, more: Partial<TranscribeRequest> = {}): TranscribeRequest => ({ audio, contentType: 'audio/wav', signal, ...more });

/** The process is still there (signal 0 checks without sending anything). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function refused(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (err: Error & { kind?: string }) => {
    assert.equal(err.name, 'MediaError');
    assert.equal(err.kind, 'not_supported');
    assert.match(err.message, pattern);
    return true;
  });
}

// What this host has decides what the driver must list: speech always (the WebAssembly Flite comes with npm ci).
const capabilities: MediaCapability[] = ['TextToSpeech', ...(has.pocketsphinx ? (['Transcription'] as const) : [])];

mediaConformance({ name: 'media-local', only: ['media-local'], provider: 'local', env: {}, capabilities }, (h) => {
  let kit: MediaDriverKit;
  before(() => {
    kit = h().kernel.kernel.services.view<MediaDriverKit>('media.kit');
  });

  describe('the round trip with the system engines', { skip: NO_SYSTEM_ENGINES }, () => {
    it('a 102-word paragraph spoken by flite (rms) and transcribed by pocketsphinx: at least 90 % of the words', async (t) => {
      const driver = driverWith(kit, { speech_engine: 'system' });
      const spoken = await driver.synthesize!(speech(PARAGRAPH));
      assert.equal(spoken.model, 'flite-rms');
      const info = await kit.probe(spoken.audio);
      assert.deepEqual([info.format, info.sampleRate, info.channels], ['wav', 16000, 1]);
      assert.ok(info.durationMs! > 20_000, `a paragraph's worth of speech: ${info.durationMs} ms`);
      const result = await driver.transcribe!(heard(spoken.audio));
      assert.equal(result.model, 'pocketsphinx-en-us');
      const accuracy = wordAccuracy(PARAGRAPH, result.text);
      t.diagnostic(`word accuracy ${(accuracy * 100).toFixed(1)} %: ${result.text}`);
      assert.ok(accuracy >= 0.9, `word accuracy ${(accuracy * 100).toFixed(1)} %: ${result.text}`);
    });
  });

  describe('the WebAssembly Flite (npm ci alone)', () => {
    let driver: MediaDriver;
    before(() => {
      driver = driverWith(kit, { speech_engine: 'wasm' });
    });

    it('speaks a sentence as a 16 kHz WAV that probes to a real duration', async () => {
      const spoken = await driver.synthesize!(speech(SENTENCE));
      const info = await kit.probe(spoken.audio);
      assert.deepEqual([info.format, info.sampleRate], ['wav', 16000]);
      assert.ok(info.durationMs! > 1000, `duration ${info.durationMs} ms`);
    });

    it('what it says is understood: pocketsphinx gets at least 80 % of the words', { skip: NO_POCKETSPHINX }, async (t) => {
      const spoken = await driver.synthesize!(speech(SENTENCE));
      const result = await driverWith(kit).transcribe!(heard(spoken.audio));
      const accuracy = wordAccuracy(SENTENCE, result.text);
      t.diagnostic(`word accuracy ${(accuracy * 100).toFixed(1)} %: ${result.text}`);
      assert.ok(accuracy >= 0.8, `word accuracy ${(accuracy * 100).toFixed(1)} %: ${result.text}`);
    });

    it("prints no ExperimentalWarning: WASI's warning is dropped in its worker", async () => {
      const child = path.join(import.meta.dirname, 'wasm-child.ts');
      const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', child], { timeout: 60_000 });
      assert.ok(Number(stdout) > 1000, `a WAV was made: ${stdout}`);
      assert.doesNotMatch(stderr, /ExperimentalWarning|WASI/);
    });

    it('a caller that gives up stops the synthesis at once', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('the caller gave up')), 50);
      const started = Date.now();
      await assert.rejects(driver.synthesize!(speech(PARAGRAPH.repeat(5), { signal: controller.signal })), /the caller gave up/);
      assert.ok(Date.now() - started < 3000, `stopped after ${Date.now() - started} ms`);
    });
  });

  describe('speech options', () => {
    it('speed 2 speaks in about half the time (duration_stretch 0.5)', async () => {
      const driver = driverWith(kit);
      const normal = await kit.probe((await driver.synthesize!(speech(SENTENCE))).audio);
      const fast = await kit.probe((await driver.synthesize!(speech(SENTENCE, { speed: 2 }))).audio);
      const ratio = fast.durationMs! / normal.durationMs!;
      assert.ok(ratio > 0.4 && ratio < 0.65, `fast/normal = ${ratio.toFixed(2)}`);
    });

    it('a voice by name or as the model flite-<voice>', async () => {
      const driver = driverWith(kit);
      assert.equal((await driver.synthesize!(speech('Hello.', { voice: 'slt' }))).model, 'flite-slt');
      assert.equal((await driver.synthesize!(speech('Hello.', { model: 'flite-awb' }))).model, 'flite-awb');
    });

    it('refuses what it cannot do, naming the field: another voice, model or language', async () => {
      const driver = driverWith(kit);
      await refused(driver.synthesize!(speech('Hello.', { voice: 'alloy' })), /^voice: 'alloy' is not a local voice \(rms, slt, awb, kal\)/);
      await refused(driver.synthesize!(speech('Hello.', { model: 'tts-1' })), /^model: /);
      await refused(driver.synthesize!(speech('Hallo.', { language: 'de' })), /^language: local speech speaks English only/);
    });
  });

  describe('what the host has', () => {
    it('with nothing installed: speech from the WebAssembly Flite only, and the hint names the packages', async () => {
      await withOnly([], async () => {
        const driver = driverWith(kit);
        assert.deepEqual(driver.capabilities(), ['TextToSpeech']);
        assert.equal(driver.configured(), true);
        assert.match(driver.setupHint(), /faster speech: apt install flite/);
        assert.match(driver.setupHint(), /transcription: apt install pocketsphinx pocketsphinx-en-us ffmpeg/);
        await refused(driver.transcribe!(heard(sampleWav(1, 16000))), /needs pocketsphinx.*apt install pocketsphinx pocketsphinx-en-us ffmpeg/);
        const systemOnly = driverWith(kit, { speech_engine: 'system' });
        assert.deepEqual(systemOnly.capabilities(), []);
        assert.match(systemOnly.setupHint(), /^speech: apt install flite/);
      });
    });

    it('with everything installed it offers speech and transcription, and says so', { skip: NO_SYSTEM_ENGINES || (!has.ffmpeg && 'needs ffmpeg') }, () => {
      const driver = driverWith(kit);
      assert.deepEqual(driver.capabilities(), ['TextToSpeech', 'Transcription']);
      assert.match(driver.setupHint(), /^nothing to install/);
    });

    it(
      'without ffmpeg: a 16 kHz mono WAV is transcribed as it is, anything else is refused naming ffmpeg',
      { skip: NO_POCKETSPHINX || (!has.ffmpeg && 'needs ffmpeg to make the MP3') },
      async () => {
        const mp3 = await kit.convert(sampleWav(1, 16000), 'mp3');
        await withOnly(['pocketsphinx_continuous'], async () => {
          const driver = driverWith(kit);
          assert.deepEqual(driver.capabilities(), ['TextToSpeech', 'Transcription']);
          assert.match(driver.setupHint(), /16 kHz mono WAV: apt install ffmpeg/);
          const result = await driver.transcribe!(heard(sampleWav(1, 16000)));
          assert.equal(typeof result.text, 'string');
          await refused(driver.transcribe!(heard(mp3, { contentType: 'audio/mpeg' })), /needs ffmpeg/);
        });
      },
    );

    it('a caller that gives up while its audio is converted stops ffmpeg at once', { skip: NO_POCKETSPHINX }, async () => {
      const hanging = (dir: string) => ({ ffmpeg: `echo $$ > ${dir}/ffmpeg.pid\nexec /bin/sleep 30` });
      await withOnly(
        ['pocketsphinx_continuous'],
        async (dir) => {
          const controller = new AbortController();
          setTimeout(() => controller.abort(new Error('the caller gave up')), 300);
          const started = Date.now();
          // 22.05 kHz: not the 16 kHz pocketsphinx reads, so it goes through ffmpeg.
          await assert.rejects(driverWith(kit).transcribe!(heard(sampleWav(1, 22050), { signal: controller.signal })), /the caller gave up/);
          assert.ok(Date.now() - started < 3000, `stopped after ${Date.now() - started} ms`);
          const pid = Number(readFileSync(path.join(dir, 'ffmpeg.pid'), 'utf8'));
          await waitFor(() => !alive(pid), 5000, 'ffmpeg killed');
        },
        hanging,
      );
    });

    it('transcription refuses another model or language, naming the field', { skip: NO_POCKETSPHINX }, async () => {
      const driver = driverWith(kit);
      await refused(driver.transcribe!(heard(sampleWav(1, 16000), { model: 'whisper-1' })), /^model: local transcription has the model pocketsphinx-en-us/);
      await refused(driver.transcribe!(heard(sampleWav(1, 16000), { language: 'fr' })), /^language: local transcription knows English only/);
    });
  });
});
