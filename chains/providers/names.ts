/**
 * How logs, metrics and errors name each provider: its URL's host, with its position in the list when
 * two share a host (or the URL cannot be parsed). Never the URL itself: its path, query or user part
 * may carry an API key.
 */
export function providerNames(urls: string[]): string[] {
  const hosts = urls.map((url) => {
    try {
      return new URL(url).hostname || undefined;
    } catch {
      return undefined;
    }
  });
  return hosts.map((host, i) => {
    if (host === undefined) return `provider-${i}`;
    return hosts.filter((h) => h === host).length > 1 ? `${host}#${i}` : host;
  });
}
