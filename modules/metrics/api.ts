/**
 * Contract of the metrics module. Other modules add their metrics to this
 * registry (prom-client). It belongs to the metrics module's current copy:
 * after a hot reload of the metrics module the registry is a new one, so
 * register metrics when your module starts and check `getSingleMetric` first.
 */
import type { Counter, CounterConfiguration, Gauge, GaugeConfiguration, Registry } from 'prom-client';
import { serviceRef } from '@talon/module-sdk';

export const metricsRegistry = serviceRef<Registry>('metrics.registry');

/**
 * Makes prom-client metrics registered in the current registry, for modules that do not load prom-client themselves
 * (a package is loaded by one module, or declared at the root).
 */
export interface MetricsFactory {
  counter<T extends string>(config: Omit<CounterConfiguration<T>, 'registers'>): Counter<T>;
  gauge<T extends string>(config: Omit<GaugeConfiguration<T>, 'registers'>): Gauge<T>;
}

export const metricsFactory = serviceRef<MetricsFactory>('metrics.factory');
