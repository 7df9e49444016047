/**
 * The peer wire format: each frame is a 4-byte big-endian length and a payload. Handshake frames are JSON (at most
 * 64 KiB); after the handshake every frame is JSON sealed with AES-256-GCM under the connection's key for that
 * direction, with a counter as the nonce (so a replayed, dropped or reordered frame fails to open).
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';
import type { Socket } from 'node:net';

export const MAX_HANDSHAKE_FRAME = 64 * 1024;
export const MAX_FRAME = 16 * 1024 * 1024;

export class FrameError extends Error {}

/** Splits the byte stream into frames. */
export class FrameReader {
  private buffer: Buffer = Buffer.alloc(0);

  constructor(private max: number) {}

  setMax(max: number): void {
    this.max = max;
  }

  push(chunk: Buffer): Buffer[] {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    const frames: Buffer[] = [];
    while (this.buffer.length >= 4) {
      const length = this.buffer.readUInt32BE(0);
      if (length > this.max) throw new FrameError(`frame of ${length} bytes is over the limit of ${this.max}`);
      if (this.buffer.length < 4 + length) break;
      frames.push(this.buffer.subarray(4, 4 + length));
      this.buffer = this.buffer.subarray(4 + length);
    }
    return frames;
  }
}

export function writeFrame(socket: Socket, payload: Buffer): void {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(payload.length);
  socket.write(Buffer.concat([head, payload]));
}

/** One direction of an established connection. */
export class Sealer {
  private counter = 0n;

  constructor(private readonly key: Buffer) {}

  private nonce(): Buffer {
    const iv = Buffer.alloc(12);
    iv.writeBigUInt64BE(this.counter++, 4);
    return iv;
  }

  seal(value: unknown): Buffer {
    const iv = this.nonce();
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return Buffer.concat([body, cipher.getAuthTag()]);
  }

  /** Throws when the frame was not sealed with this key at this position of the stream. */
  open(frame: Buffer): unknown {
    const iv = this.nonce();
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAuthTag(frame.subarray(frame.length - 16));
    const plain = Buffer.concat([decipher.update(frame.subarray(0, frame.length - 16)), decipher.final()]);
    return JSON.parse(plain.toString('utf8'));
  }
}
