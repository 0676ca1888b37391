import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { inject } from 'vitest';

/** Flags for a browser in a test: no sandbox (root in a container), nothing fetched from the internet. */
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface TestBrowser {
  context: BrowserContext;
  /** The window the browser opened with. */
  page: Page;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/**
 * Waits until `predicate` holds in `page`; when it gives up, the error says `what` it waited for
 * (usable in a beforeAll too, where vitest's expect.poll is not).
 */
export async function waitForPage(page: Page, predicate: () => boolean, what: string, timeout = 30_000): Promise<void> {
  try {
    await page.waitForFunction(predicate, undefined, { timeout });
  } catch (error) {
    throw new Error(`gave up after ${timeout} ms waiting for ${what}`, { cause: error });
  }
}

/**
 * Debian's chromium (installed by scripts/install-browser.mjs from the test setup), headless, with a
 * fresh profile of its own (--user-data-dir), as a stock browser a user opens.
 */
export async function launchBrowser(): Promise<TestBrowser> {
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'relayer-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath: inject('chromium'), headless: true, args: CHROMIUM_FLAGS });
  const page = context.pages()[0] ?? await context.newPage();
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
