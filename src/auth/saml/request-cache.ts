import type { CacheItem, CacheProvider } from '@node-saml/node-saml';
import { Op } from 'sequelize';
import type { SamlRequestModel } from '../../db/models/saml';

/** How long an AuthnRequest may wait for its response (a user logging in at the IdP). */
export const SAML_REQUEST_TTL_MS = 10 * 60 * 1000;

/**
 * node-saml's InResponseTo cache, in the database, so the process that receives the response need
 * not be the one that sent the request. The value node-saml stores is the creation instant.
 */
export class DatabaseRequestCache implements CacheProvider {
  constructor(private readonly requests: SamlRequestModel) {}

  async saveAsync(key: string, value: string): Promise<CacheItem | null> {
    await this.requests.destroy({ where: { created_at: { [Op.lt]: new Date(Date.now() - SAML_REQUEST_TTL_MS) } } });
    const existing = await this.requests.findByPk(key);
    if (existing) return null;
    await this.requests.create({ id: key });
    return { value, createdAt: Date.now() };
  }

  async getAsync(key: string): Promise<string | null> {
    const row = await this.requests.findByPk(key);
    return row ? new Date(row.created_at).toISOString() : null;
  }

  async removeAsync(key: string | null): Promise<string | null> {
    if (key === null) return null;
    const row = await this.requests.findByPk(key);
    if (!row) return null;
    await row.destroy();
    return new Date(row.created_at).toISOString();
  }
}
