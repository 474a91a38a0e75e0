/**
 * The documented starting state of the emulated Google services, used by the README's examples: project
 * `demo-project` with API keys `demo-key-1` … `demo-key-3` under `locations/global` and the managed zone
 * `demo-zone` (`demo.example.com.`); log buckets can be created under `projects/demo-project`,
 * `organizations/demo-org`, `folders/demo-folder` and `billingAccounts/demo-billing` (any location).
 */

export interface FixtureApiKey {
  project: string;
  keyId: string;
  displayName: string;
}

export interface FixtureRecordSet {
  name: string;
  type: string;
  ttl: number;
  rrdatas: string[];
}

export interface FixtureZone {
  project: string;
  name: string;
  dnsName: string;
  rrsets: FixtureRecordSet[];
}

export interface GoogleFixture {
  /** Known parent ids per parent kind; anything else is PERMISSION_DENIED, as for a project you cannot see. */
  parents: { projects: string[]; organizations: string[]; folders: string[]; billingAccounts: string[] };
  apiKeys: FixtureApiKey[];
  zones: FixtureZone[];
}

export function defaultGoogleFixture(): GoogleFixture {
  return {
    parents: { projects: ['demo-project'], organizations: ['demo-org'], folders: ['demo-folder'], billingAccounts: ['demo-billing'] },
    apiKeys: [1, 2, 3].map((n) => ({ project: 'demo-project', keyId: `demo-key-${n}`, displayName: `Demo key ${n}` })),
    zones: [
      {
        project: 'demo-project',
        name: 'demo-zone',
        dnsName: 'demo.example.com.',
        rrsets: [
          { name: 'demo.example.com.', type: 'SOA', ttl: 21600, rrdatas: ['ns-cloud-a1.googledomains.com. cloud-dns-hostmaster.google.com. 1 21600 3600 259200 300'] },
          { name: 'demo.example.com.', type: 'NS', ttl: 21600, rrdatas: ['ns-cloud-a1.googledomains.com.', 'ns-cloud-a2.googledomains.com.'] },
          { name: 'www.demo.example.com.', type: 'A', ttl: 300, rrdatas: ['192.0.2.10'] },
        ],
      },
    ],
  };
}
