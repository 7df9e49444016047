/** A configuration problem that stops start-up (exit code 2) or refuses a change (400). */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
