/** The origin (scheme, host, port) of a URL, or undefined when there is none or it does not parse. */
export function originOf(url: string | undefined): string | undefined {
  try {
    return url ? new URL(url).origin : undefined;
  } catch {
    return undefined;
  }
}
