/** A configuration problem that stops start-up (exit code 2) or refuses a change (400). */
export { ConfigError, isConfigError } from '@talon/module-sdk';
