/**
 * Contract of the metrics module. Other modules add their metrics to this
 * registry (prom-client). It belongs to the metrics module's current copy:
 * after a hot reload of the metrics module the registry is a new one, so
 * register metrics when your module starts and check `getSingleMetric` first.
 */
import type { Registry } from 'prom-client';
import { serviceRef } from '@talon/module-sdk';

export const metricsRegistry = serviceRef<Registry>('metrics.registry');
