/**
 * Contract of the pairing module (`@talon/pairing`): paired devices as a credential. The module taps the auth
 * module's `authenticate` hook so a device's bearer token is admitted (see docs/auth.md): the token is compared by
 * hash and stops working the moment the device is removed.
 */
import { serviceRef } from '@talon/module-sdk';

export interface DevicePrincipal {
  /** 'device:<id>' */
  subject: string;
  /** Devices act as a user, never as an administrator. */
  role: 'user';
  via: 'device';
  deviceId: string;
}

export interface PushOutcome {
  sent: number;
  failed: number;
  /** Why nothing was sent (pairing off, no push provider, no device), if so. */
  skipped?: string;
}

export interface PairedDevices {
  /** Pushes a note to every paired device (ntfy or Gotify); never throws. */
  notify(note: { title: string; message: string }): Promise<PushOutcome>;
  /** The device whose token is in `Authorization: Bearer <token>`, or undefined (also when pairing is off). */
  authenticate(headers: Record<string, string | string[] | undefined>): DevicePrincipal | undefined;
}

export const pairedDevices = serviceRef<PairedDevices>('pairing.devices');
