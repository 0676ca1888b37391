import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

/** The compose stack's Prometheus config (the one source of jobs and rule files). */
export const COMPOSE_PROMETHEUS_CONFIG = fileURLToPath(new URL('./prometheus.yml', import.meta.url));

export interface LocalScrapeConfig {
  /** prometheus.yml text for processes on this machine. */
  yaml: string;
  /** Jobs of the compose config that got local targets. */
  scraped: string[];
  /** Jobs of the compose config left out because nothing local serves them. */
  dropped: string[];
}

/**
 * A Prometheus config for processes running on this machine, generated from the compose stack's
 * config: the same jobs (names, metrics paths, relabelling) and the same rule files (made
 * absolute), each job's service discovery replaced by the local `targets` given for it
 * (`host:port`). A job given no target is dropped and reported; a target for a job the compose
 * config does not have is an error, so the two cannot drift apart.
 */
export function localScrapeConfig(targets: Record<string, string[]>, options: { scrapeInterval?: string; source?: string } = {}): LocalScrapeConfig {
  const source = options.source ?? COMPOSE_PROMETHEUS_CONFIG;
  const config = parse(readFileSync(source, 'utf8'));
  const jobs: { job_name: string }[] = config.scrape_configs;
  for (const job of Object.keys(targets)) {
    if (!jobs.some((j) => j.job_name === job)) throw new Error(`no job '${job}' in ${source}`);
  }
  const sdKeys = (job: object) => Object.keys(job).filter((key) => key.endsWith('_sd_configs') || key === 'static_configs');
  const scrapeConfigs = jobs.filter((job) => targets[job.job_name]?.length).map((job) => {
    const local: { job_name: string } & Record<string, unknown> = { ...job };
    for (const key of sdKeys(job)) delete local[key];
    return { ...local, static_configs: [{ targets: targets[job.job_name] }] };
  });
  const interval = options.scrapeInterval;
  const global = interval ? { ...config.global, scrape_interval: interval, evaluation_interval: interval } : config.global;
  const ruleFiles = (config.rule_files ?? []).map((file: string) => fileURLToPath(new URL(file, `file://${source}`)));
  return {
    yaml: stringify({ ...config, global, rule_files: ruleFiles, scrape_configs: scrapeConfigs }),
    scraped: scrapeConfigs.map((job) => job.job_name),
    dropped: jobs.map((job) => job.job_name).filter((name) => !targets[name]?.length),
  };
}
