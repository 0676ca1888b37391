import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { localScrapeConfig } from './local-config.ts';

describe('localScrapeConfig', () => {
  it('keeps the compose jobs and rules, with local targets in place of service discovery', () => {
    const local = localScrapeConfig({ 'relayer-api': ['127.0.0.1:3000'], 'relayer-prover': ['127.0.0.1:4001', '127.0.0.1:4002'] }, { scrapeInterval: '1s' });
    const config = parse(local.yaml);
    expect(local.scraped).toEqual(['relayer-api', 'relayer-prover']);
    expect(local.dropped).toEqual(['relayer-worker', 'temporal']);
    expect(config.scrape_configs).toEqual([
      { job_name: 'relayer-api', static_configs: [{ targets: ['127.0.0.1:3000'] }] },
      { job_name: 'relayer-prover', static_configs: [{ targets: ['127.0.0.1:4001', '127.0.0.1:4002'] }] },
    ]);
    expect(config.rule_files).toEqual([new URL('./alerts.yml', import.meta.url).pathname]);
    expect(config.global).toEqual({ scrape_interval: '1s', evaluation_interval: '1s' });
  });

  it('refuses a job the compose config does not have', () => {
    expect(() => localScrapeConfig({ provers: ['127.0.0.1:1'] })).toThrow(/no job 'provers'/);
  });
});
