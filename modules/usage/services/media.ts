/**
 * Pricing of media calls (images, speech, music, video, transcription): units times the catalogue's list price of the
 * provider's model. The media module reports each call through mediaHooks.afterCall; usage records it as a row of
 * usage_calls, so media spend counts in totals and budgets like model calls do.
 */
import type { CatalogService } from '@talon/catalog';
import type { MediaCallRecord } from '@talon/media';

/** The provider that runs on this host (media-local): its calls cost nothing, so they are never "unpriced". */
export const LOCAL_PROVIDER = 'local';

export interface MediaPrice {
  costUsd: number;
  /** Units were used and the catalogue has no price for them in that unit: recorded at cost 0, flagged. */
  unpriced: boolean;
}

export function priceMedia(record: Pick<MediaCallRecord, 'provider' | 'model' | 'units' | 'unit'>, catalog: CatalogService | undefined): MediaPrice {
  if (record.provider === LOCAL_PROVIDER || !(record.units > 0)) return { costUsd: 0, unpriced: false };
  const price = catalog?.mediaPrice(record.provider, record.model);
  // A price per another unit (characters where seconds were counted) would give a wrong number: unpriced instead.
  if (!price || price.unit !== record.unit) return { costUsd: 0, unpriced: true };
  return { costUsd: record.units * price.usd_per_unit, unpriced: false };
}
