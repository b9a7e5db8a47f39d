import type { Sequelize } from 'sequelize';
import { defineApiKeyModel, type ApiKeyModel } from './api-key';
import { defineRefreshTokenModel, type RefreshTokenModel } from './refresh-token';
import { defineSamlModels, type SamlAssertionModel, type SamlRequestModel } from './saml';
import { defineUserModel, type UserModel } from './user';

/** The auth tables' models, bound to one Sequelize instance (tests open several). */
export interface AuthModels {
  User: UserModel;
  RefreshToken: RefreshTokenModel;
  ApiKey: ApiKeyModel;
  SamlAssertion: SamlAssertionModel;
  SamlRequest: SamlRequestModel;
}

const defined = new WeakMap<Sequelize, AuthModels>();

/** Defines the models once per Sequelize instance; later calls return the same ones. */
export function defineAuthModels(sequelize: Sequelize): AuthModels {
  let models = defined.get(sequelize);
  if (!models) {
    models = {
      User: defineUserModel(sequelize),
      RefreshToken: defineRefreshTokenModel(sequelize),
      ApiKey: defineApiKeyModel(sequelize),
      ...defineSamlModels(sequelize),
    };
    defined.set(sequelize, models);
  }
  return models;
}
