/** ElevenLabs takes ISO-639-1 or -3 codes: 'en-US' → 'en', 'eng' stays. */
export function languageCode(language: string | undefined): string | undefined {
  const code = language?.trim().split(/[-_]/)[0].toLowerCase();
  return code ? code : undefined;
}
