declare const __SWITCHBOARD_DOCS_URL__: string;

/**
 * A page of the documentation site. `SWITCHBOARD_DOCS_URL` at build time names where it is
 * published; without it, the site `npm run docs` serves on this host's port 8001 (the spec's).
 */
export function docsUrl(page: string): string {
  const configured = typeof __SWITCHBOARD_DOCS_URL__ === 'string' ? __SWITCHBOARD_DOCS_URL__ : '';
  const base = configured || `${window.location.protocol}//${window.location.hostname}:8001`;
  return `${base.replace(/\/+$/, '')}/${page.replace(/^\/+/, '')}`;
}
