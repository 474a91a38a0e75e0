"""Google's Python client (google-api-python-client, its bundled discovery documents) against the emulated
API Keys, Cloud Logging and Cloud DNS, through its generated methods only; every answer is checked against
the response schema of its method in the discovery document (`conforms`)."""
import googleapiclient.errors
import pytest

from conftest import eventually

KEY = "projects/demo-project/locations/global/keys/demo-key-2"
PROJECT_LOCATION = "projects/demo-project/locations/global"
ZONE = {"project": "demo-project", "managedZone": "demo-zone"}


def test_api_keys_get_delete_operation_undelete(apikeys, conforms):
    keys = apikeys.projects().locations().keys()
    key = conforms("apikeys", "v2", "projects.locations.keys.get", keys.get(name=KEY).execute())
    assert key["displayName"] == "Demo key 2"
    operation = conforms("apikeys", "v2", "projects.locations.keys.delete", keys.delete(name=KEY, etag=key["etag"]).execute())
    done = eventually(lambda: conforms("apikeys", "v2", "operations.get", apikeys.operations().get(name=operation["name"]).execute()), lambda op: op.get("done"))
    assert done["response"]["name"] == KEY and "deleteTime" in done["response"]
    # A stale etag is refused as Google refuses it.
    with pytest.raises(googleapiclient.errors.HttpError) as stale:
        keys.delete(name=KEY, etag=key["etag"]).execute()
    assert stale.value.resp.status in (400, 409)
    restored = conforms("apikeys", "v2", "projects.locations.keys.undelete", keys.undelete(name=KEY, body={}).execute())
    assert "name" in restored


def test_log_buckets_create_update_list_operations(logging_api, conforms):
    buckets = logging_api.projects().locations().buckets()
    operations = logging_api.projects().locations().operations()
    created = conforms("logging", "v2", "projects.locations.buckets.createAsync", buckets.createAsync(parent=PROJECT_LOCATION, bucketId="py-conf", body={"retentionDays": 30, "description": "python"}).execute())
    done = eventually(lambda: conforms("logging", "v2", "projects.locations.operations.get", operations.get(name=created["name"]).execute()), lambda op: op.get("done"))
    assert done["metadata"]["state"] == "OPERATION_STATE_SUCCEEDED"
    name = f"{PROJECT_LOCATION}/buckets/py-conf"
    # The original proto field name is accepted as well as the JSON name (proto3 JSON mapping).
    update = buckets.updateAsync(name=name, updateMask="retention_days", body={"retention_days": 90}).execute()
    eventually(lambda: operations.get(name=update["name"]).execute(), lambda op: op.get("done"))
    bucket = conforms("logging", "v2", "projects.locations.buckets.get", buckets.get(name=name).execute())
    assert bucket["retentionDays"] == 90 and bucket["description"] == "python"
    listed = conforms("logging", "v2", "projects.locations.buckets.list", buckets.list(parent=PROJECT_LOCATION).execute())
    assert name in [b["name"] for b in listed["buckets"]]
    ops = conforms("logging", "v2", "projects.locations.operations.list", operations.list(name=PROJECT_LOCATION, filter="request_type=CreateBucket").execute())
    assert created["name"] in [o["name"] for o in ops["operations"]]
    # Without its filter the list is a 400, as on Google.
    with pytest.raises(googleapiclient.errors.HttpError) as unfiltered:
        operations.list(name=PROJECT_LOCATION).execute()
    assert unfiltered.value.resp.status == 400


def test_log_entries_write(logging_api, conforms):
    body = {"entries": [{"logName": "projects/demo-project/logs/python-conformance", "resource": {"type": "global"}, "jsonPayload": {"hello": "world"}}]}
    conforms("logging", "v2", "entries.write", logging_api.entries().write(body=body).execute())


def test_dns_change_to_done_and_the_record_set(dns, conforms):
    addition = {"name": "py.demo.example.com.", "type": "A", "ttl": 300, "rrdatas": ["192.0.2.45"]}
    change = conforms("dns", "v1", "changes.create", dns.changes().create(**ZONE, body={"additions": [addition]}).execute())
    assert change["status"] == "pending"
    done = eventually(lambda: conforms("dns", "v1", "changes.get", dns.changes().get(**ZONE, changeId=change["id"]).execute()), lambda c: c["status"] == "done")
    assert done["id"] == change["id"]
    sets = conforms("dns", "v1", "resourceRecordSets.list", dns.resourceRecordSets().list(**ZONE).execute())
    assert addition in [{k: s[k] for k in addition} for s in sets["rrsets"]]
    latest = conforms("dns", "v1", "changes.list", dns.changes().list(**ZONE, sortOrder="descending", maxResults=1).execute())
    assert latest["changes"][0]["id"] == change["id"]
    # proto3 JSON: an integer given as a string and a field by its proto name are taken as Google takes them.
    proto_named = {"name": "py2.demo.example.com.", "type": "TXT", "ttl": "600", "rrdatas": ['"proto"'], "signature_rrdatas": []}
    second = conforms("dns", "v1", "changes.create", dns.changes().create(**ZONE, body={"additions": [proto_named]}).execute())
    assert second["additions"][0]["ttl"] == 600
    zone = conforms("dns", "v1", "managedZones.get", dns.managedZones().get(**ZONE).execute())
    assert zone["dnsName"] == "demo.example.com."
