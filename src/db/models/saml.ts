import { DataTypes, type Model, type ModelStatic, type Sequelize } from 'sequelize';

export interface SamlAssertionAttributes {
  /** The assertion's ID attribute: each is accepted once (replay cache). */
  id: string;
  /** When the assertion stops being valid anyway; the row may be purged after this. */
  expires_at: Date;
  created_at: Date;
}
export type SamlAssertionRecord = Model<SamlAssertionAttributes, Omit<SamlAssertionAttributes, 'created_at'>> & SamlAssertionAttributes;
export type SamlAssertionModel = ModelStatic<SamlAssertionRecord>;

export interface SamlRequestAttributes {
  /** The ID of an AuthnRequest we sent, awaiting its InResponseTo. */
  id: string;
  created_at: Date;
}
export type SamlRequestRecord = Model<SamlRequestAttributes, Omit<SamlRequestAttributes, 'created_at'>> & SamlRequestAttributes;
export type SamlRequestModel = ModelStatic<SamlRequestRecord>;

export function defineSamlModels(sequelize: Sequelize): { SamlAssertion: SamlAssertionModel; SamlRequest: SamlRequestModel } {
  const SamlAssertion = sequelize.define<SamlAssertionRecord>(
    'SamlAssertion',
    {
      id: { type: DataTypes.STRING(255), primaryKey: true },
      expires_at: { type: DataTypes.DATE, allowNull: false },
      created_at: { type: DataTypes.DATE },
    },
    { tableName: 'saml_assertions', timestamps: true, createdAt: 'created_at', updatedAt: false },
  );
  const SamlRequest = sequelize.define<SamlRequestRecord>(
    'SamlRequest',
    { id: { type: DataTypes.STRING(255), primaryKey: true }, created_at: { type: DataTypes.DATE } },
    { tableName: 'saml_requests', timestamps: true, createdAt: 'created_at', updatedAt: false },
  );
  return { SamlAssertion, SamlRequest };
}
