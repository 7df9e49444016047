/**
 * True only when A and B are one type; mutual assignability is not enough (readonly and optional count). The kernel
 * uses it where the SDK describes to modules, as a type, something the kernel builds: the two cannot drift apart.
 */
export type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
