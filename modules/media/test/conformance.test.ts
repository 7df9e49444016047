/** The conformance suite on the test driver 'fixture': every capability through the routes, the kit's paths included. */
import path from 'node:path';
import { mediaConformance } from '@talon/testing';
import { startFixtureServer } from './fixture-server.ts';

const fixtures = path.resolve(import.meta.dirname, '../../../test/fixtures/modules');

mediaConformance({
  name: 'media (fixture driver)',
  only: ['media-fixture'],
  provider: 'fixture',
  env: { MEDIA_FIXTURE_API_KEY: 'fixture-key' },
  capabilities: ['ImageGeneration', 'TextToSpeech', 'MusicGeneration', 'Transcription', 'VideoGeneration'],
  fake: startFixtureServer,
  config: (url) => `module_paths = ["${fixtures}"]\n[provider_urls]\nfixture = "${url}"\n`,
});
