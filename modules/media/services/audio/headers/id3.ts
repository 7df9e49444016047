/** Where the audio starts after an ID3v2 tag (its size is four 7-bit bytes; a footer adds 10). */
export function skipId3v2(b: Buffer): number {
  if (b.length < 10 || b.toString('latin1', 0, 3) !== 'ID3') return 0;
  const size = ((b[6] & 0x7f) << 21) | ((b[7] & 0x7f) << 14) | ((b[8] & 0x7f) << 7) | (b[9] & 0x7f);
  const footer = b[5] & 0x10 ? 10 : 0;
  return Math.min(b.length, 10 + size + footer);
}
