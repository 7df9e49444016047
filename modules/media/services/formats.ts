/** The contract's unions as lists (a contract exports no values): schemas and checks iterate these. */
import type { AudioFormat, MediaCapability } from '@talon/media';

export const MEDIA_CAPABILITIES: readonly MediaCapability[] = ['ImageGeneration', 'TextToSpeech', 'VideoGeneration', 'MusicGeneration', 'Transcription'];

export const AUDIO_FORMATS: readonly AudioFormat[] = ['mp3', 'wav', 'opus', 'ogg', 'flac', 'aac'];
