import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { inflateRawSync } from 'node:zlib';
import { SignedXml } from 'xml-crypto';
import { SAML_ACS_BODY_LIMIT_BYTES } from '../src/auth/saml/limits';
import type { Benchmark, Metric } from './lib/benchmark';
import { startBenchHub, UNTHROTTLED } from './lib/hub';
import { percentile } from './lib/latency';

/**
 * The hub's event-loop stall while an attacker posts forged SAML responses to the unauthenticated
 * assertion consumer: each is as large as the body limit allows, full of small elements (the
 * costliest shape to parse and canonicalise), signed by an untrusted key with a correct digest, and
 * answers a real AuthnRequest (an attacker gets one from `GET /auth/saml/login`), so it passes every
 * cheap check and reaches the signature work. Measured inside the hub's process with
 * monitorEventLoopDelay, and by a health probe (GET /health every 5 ms) running meanwhile.
 * Before the signature work moved to a worker thread, a 720 KB response stalled the loop ~0.8–2 s.
 */
export const SAML_ACS_BENCH = {
  forgedPerRun: 4,
  probeIntervalMs: 5,
  goals: { maxStallMs: 50 },
};

const PUBLIC_URL = 'https://hub.example.test';
const ACS_URL = `${PUBLIC_URL}/api/v1/auth/saml/acs`;

function keyPair(dir: string, name: string): { key: string; cert: string; certFile: string } {
  const keyFile = path.join(dir, `${name}.key`);
  const certFile = path.join(dir, `${name}.crt`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', `/CN=${name}`], {
    stdio: 'ignore',
  });
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}

/** A form body `SAMLResponse=…` just under the limit, answering `inResponseTo`, signed by `signer`. */
function forgedForm(inResponseTo: string, signer: { key: string; cert: string }): string {
  const iso = (offsetS: number) => new Date(Date.now() + offsetS * 1000).toISOString();
  const attribute = (index: number) => `<saml:Attribute Name="g${index}"><saml:AttributeValue>v</saml:AttributeValue></saml:Attribute>`;
  // base64 (4/3) plus URL-encoding of + / = (~3 %)
  const xmlBudget = Math.floor((SAML_ACS_BODY_LIMIT_BYTES * 0.7) / attribute(0).length);
  let attributes = '';
  for (let index = 0; index < xmlBudget; index += 1) attributes += attribute(index);
  const assertion =
    `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_${randomUUID()}" Version="2.0" IssueInstant="${iso(-5)}">` +
    `<saml:Issuer>https://idp.example.test</saml:Issuer><saml:Subject><saml:NameID>mallory@example.test</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${iso(300)}" Recipient="${ACS_URL}" InResponseTo="${inResponseTo}"/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${iso(-600)}" NotOnOrAfter="${iso(300)}"><saml:AudienceRestriction><saml:Audience>switchboard</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AttributeStatement>${attributes}</saml:AttributeStatement></saml:Assertion>`;
  const signature = new SignedXml({
    privateKey: signer.key,
    publicCert: signer.cert,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  signature.addReference({
    xpath: "/*[local-name(.)='Assertion']",
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
  });
  signature.computeSignature(assertion, { location: { reference: "/*[local-name(.)='Assertion']/*[local-name(.)='Issuer']", action: 'after' } });
  const xml =
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_${randomUUID()}" Version="2.0" ` +
    `IssueInstant="${iso(0)}" Destination="${ACS_URL}" InResponseTo="${inResponseTo}"><saml:Issuer>https://idp.example.test</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>${signature.getSignedXml()}</samlp:Response>`;
  return new URLSearchParams({ SAMLResponse: Buffer.from(xml).toString('base64') }).toString();
}

export const benchmark: Benchmark = {
  name: 'saml-acs',
  description: 'event-loop stall (max) and health-probe latency while forged max-size SAML responses are checked',
  async run(options) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-bench-saml-'));
    const idp = keyPair(dir, 'idp');
    const attacker = keyPair(dir, 'attacker');
    const hub = await startBenchHub({
      env: {
        SERVICE_PUBLIC_URL: PUBLIC_URL,
        SERVICE_SAML_ENABLED: 'true',
        SERVICE_SAML_ENTRY_POINT: 'https://idp.example.test/sso',
        SERVICE_SAML_IDP_CERT_FILE: idp.certFile,
        SERVICE_RATE_LIMIT_SAML_ACS: UNTHROTTLED,
      },
    });
    const stalls: number[] = [];
    const probeP99: number[] = [];
    const acsMs: number[] = [];
    let formBytes = 0;
    try {
      const post = (body: string) =>
        fetch(`${hub.api}/auth/saml/acs`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body,
        });
      const forged = async () => {
        const location = (await fetch(`${hub.api}/auth/saml/login`, { redirect: 'manual' })).headers.get('location')!;
        const request = inflateRawSync(Buffer.from(new URL(location).searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
        return forgedForm(/\sID="([^"]+)"/.exec(request)![1]!, attacker);
      };
      const warm = await forged();
      formBytes = warm.length;
      const warmStatus = (await post(warm)).status;
      if (warmStatus !== 401) throw new Error(`a forged response answered ${warmStatus}, expected 401 (is it over the body limit?)`);
      for (let run = 0; run < options.runs; run += 1) {
        const bodies = await Promise.all(Array.from({ length: SAML_ACS_BENCH.forgedPerRun }, forged));
        const histogram = monitorEventLoopDelay({ resolution: 1 });
        const probes: number[] = [];
        let probing = true;
        const prober = (async () => {
          while (probing) {
            const start = performance.now();
            await fetch(`${hub.api}/health`);
            probes.push(performance.now() - start);
            await new Promise((resolve) => setTimeout(resolve, SAML_ACS_BENCH.probeIntervalMs));
          }
        })();
        histogram.enable();
        for (const body of bodies) {
          const start = performance.now();
          const status = (await post(body)).status;
          acsMs.push(performance.now() - start);
          if (status !== 401) throw new Error(`a forged response answered ${status}`);
        }
        histogram.disable();
        probing = false;
        await prober;
        stalls.push(histogram.max / 1e6);
        probeP99.push(percentile(probes, 99));
        options.log(`run ${run + 1}: max stall ${(histogram.max / 1e6).toFixed(1)} ms, probe p99 ${percentile(probes, 99).toFixed(1)} ms`);
      }
    } finally {
      await hub.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    const metrics: Metric[] = [
      {
        name: 'event-loop stall, max',
        unit: 'ms',
        samples: stalls,
        goal: { text: `≤ ${SAML_ACS_BENCH.goals.maxStallMs} ms`, met: (median) => median <= SAML_ACS_BENCH.goals.maxStallMs },
      },
      { name: 'health probe p99', unit: 'ms', samples: probeP99 },
      { name: 'forged ACS answer (401)', unit: 'ms', samples: acsMs },
    ];
    return { metrics, setup: { form_body_bytes: formBytes, body_limit_bytes: SAML_ACS_BODY_LIMIT_BYTES, forged_per_run: SAML_ACS_BENCH.forgedPerRun } };
  },
};
