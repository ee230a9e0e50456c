#!/usr/bin/env python3
"""Writes heldout_secrets5.jsonl: what the first four tables hold least.
Secrets in connection strings and URLs of many schemes (userinfo, signed
URLs' query parameters, tokens in query strings and fragments, webhook
paths), cloud and CI credentials in their tools' own config files
(kubeconfig, docker config.json, .npmrc, .pypirc, netrc, gcloud and azure
JSON, tfvars, Helm values, git config, NuGet, bundler, mail clients,
fstab), private keys in every PEM, OpenSSH, PuTTY, PGP, JWK and one-line
escaped form, JWTs and session cookies in logs, secrets split across
string concatenation, shell history (export, -p and --password flags,
sshpass, mysql -p, secret-setting CLIs), stack traces and HTTP dumps
(curl -v, HAR, raw requests, error dumps of HTTP clients); and hard
negatives in the same syntaxes: hashes, checksums, lockfile integrity
values, SRI attributes, commit ids, UUIDs and the ids of API objects,
base64 that is no secret, public keys and certificates (also escaped and
base64), documented example values, placeholders and references, test
fixtures marked fake, values already redacted or masked, URLs and
commands that carry no secret, error messages that name a secret without
holding it, locale files and schemas. Written before any rule fitted to
it; values random (seeded), fake.

usage: python3 heldout_secrets5_gen.py > heldout_secrets5.jsonl

Markers and storage as in heldout_secrets_gen.py («name» a secret that
must not survive, «~name» a random value that is no secret; ROT13 on
disk). A generator may return (text, secrets) when only parts of what it
writes are secret (the body lines of a PEM block).
"""
import base64
import json
import re
import sys
import urllib.parse

import heldout_secrets_gen as h
from heldout_secrets_gen import G, HX, B64, AL, UP, LO, DG, US, rs, mixed, uid, pw

R = h.R
B64U = AL + "-_"


def b64(n):
    return base64.b64encode(bytes(R.getrandbits(8) for _ in range(n))).decode()


def b64u(n):
    return base64.urlsafe_b64encode(bytes(R.getrandbits(8) for _ in range(n))).decode().rstrip("=")


def pem_lines(first, n, width=64):
    lines = [first + rs(B64, width - len(first))] + [rs(B64, width) for _ in range(n - 1)]
    lines.append(rs(B64, R.randint(20, 60)) + R.choice(["", "=", "=="]))
    return lines


def pem(label, first, n=8, sep="\n", headers=None):
    lines = pem_lines(first, n)
    body = ([*headers, ""] if headers else []) + lines
    text = sep.join(["-----BEGIN %s-----" % label] + body + ["-----END %s-----" % label])
    return text, lines[1:-1]


def openssh(sep="\n"):
    lines = pem_lines("b3BlbnNzaC1rZXktdjEAAAAA", 7, 70)
    return sep.join(["-----BEGIN OPENSSH PRIVATE KEY-----"] + lines + ["-----END OPENSSH PRIVATE KEY-----"]), lines[1:-1]


def putty(v=3):
    pub = ["AAAAC3NzaC1lZDI1NTE5AAAAI" + rs(B64, 43)] if v == 3 else ["AAAAB3NzaC1yc2EAAAADAQABAAABAQ" + rs(B64, 34)] + [rs(B64, 64) for _ in range(4)]
    priv = ["AAAAI" + rs(B64, 59)] if v == 3 else [rs(B64, 64) for _ in range(9)]
    alg = "ssh-ed25519" if v == 3 else "ssh-rsa"
    lines = ["PuTTY-User-Key-File-%d: %s" % (v, alg), "Encryption: none", "Comment: deploy@build-01",
             "Public-Lines: %d" % len(pub), *pub, "Private-Lines: %d" % len(priv), *priv,
             "Private-%s: %s" % ("MAC" if v == 3 else "MAC", rs(HX, 64 if v == 3 else 40))]
    return "\n".join(lines), priv


def ssh2_enc():
    lines = ["P2/56wAAA" + rs(B64, 61)] + [rs(B64, 70) for _ in range(6)] + [rs(B64, 30) + "="]
    return "\n".join(["---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----", "Comment: \"rsa-key-20261201\""] + lines + ["---- END SSH2 ENCRYPTED PRIVATE KEY ----"]), lines[1:-1]


def pgp_priv():
    lines = ["lQOYBG" + rs(B64, 58)] + [rs(B64, 64) for _ in range(7)] + ["=" + rs(B64, 4)]
    return "\n".join(["-----BEGIN PGP PRIVATE KEY BLOCK-----", "", *lines, "-----END PGP PRIVATE KEY BLOCK-----"]), lines[1:-1]


def b64pem(label, first):
    text, _ = pem(label, first, 6)
    enc = base64.b64encode((text + "\n").encode()).decode()
    # the secret is the encoding of the body: every 40 characters past the header
    return enc, [enc[i:i + 40] for i in range(44, len(enc) - 60, 40)]


def gen_azsecret():
    return rs(AL, 3) + R.choice(DG) + "Q~" + rs(US + ".~", 34)


def gen_sas():
    return urllib.parse.quote(b64(32), safe="")


def gen_cookie_rails():
    return b64(60).replace("=", "%3D") + "--" + rs(HX, 40)


def gen_connect_sid():
    return "s%3A" + mixed(US, 32) + "." + b64(32).rstrip("=").replace("+", "%2B").replace("/", "%2F")


def gen_jwe():
    return "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0.." + b64u(12) + "." + b64u(180) + "." + b64u(16)


def gen_jwt_rs():
    head = base64.urlsafe_b64encode(json.dumps({"alg": "RS256", "kid": rs(HX, 40), "typ": "JWT"}).encode()).decode().rstrip("=")
    body = base64.urlsafe_b64encode(json.dumps({"iss": "https://login.acme.io/", "sub": uid(), "aud": "api", "exp": R.randint(1800000000, 1900000000), "scope": "read write"}).encode()).decode().rstrip("=")
    return head + "." + body + "." + b64u(256)


def gen_laravel():
    return base64.b64encode(json.dumps({"iv": b64(16), "value": b64(48), "mac": rs(HX, 64), "tag": ""}).encode()).decode().replace("=", "%3D")


def gen_b64ghp():
    return base64.b64encode(G["ghp"]().encode()).decode()


def gen_wp():
    return "admin%7C" + str(R.randint(1700000000, 1800000000)) + "%7C" + mixed(AL, 43) + "%7C" + rs(HX, 64)


def gen_wg():
    return b64(32)


def gen_jwk_d():
    return b64u(32)


def gen_tm():
    return b64(64)


G.update({
    "pkcs1": lambda: pem("RSA PRIVATE KEY", "MIIEpAIBAAKCAQEA"),
    "pkcs8": lambda: pem("PRIVATE KEY", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ"),
    "pkcs8esc": lambda: pem("PRIVATE KEY", "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQ", sep="\\n"),
    "pkcs8esc2": lambda: pem("PRIVATE KEY", "MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQ", sep="\\\\n"),
    "pkcs1crlf": lambda: pem("RSA PRIVATE KEY", "MIIEowIBAAKCAQEA", sep="\r\n"),
    "pkcs1sp": lambda: pem("RSA PRIVATE KEY", "MIIEogIBAAKCAQEA", n=5, sep=" "),
    "ec": lambda: pem("EC PRIVATE KEY", "MHcCAQEEI", n=2),
    "encpk": lambda: pem("ENCRYPTED PRIVATE KEY", "MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI"),
    "pkcs1enc": lambda: pem("RSA PRIVATE KEY", "r" + rs(B64, 10), headers=["Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC," + rs("0123456789ABCDEF", 32)]),
    "dsa": lambda: pem("DSA PRIVATE KEY", "MIIBvAIBAAKBgQ", n=6),
    "openssh": openssh,
    "opensshesc": lambda: openssh("\\n"),
    "putty3": lambda: putty(3),
    "putty2": lambda: putty(2),
    "ssh2enc": ssh2_enc,
    "pgppriv": pgp_priv,
    "b64pkcs1": lambda: b64pem("RSA PRIVATE KEY", "MIIEpQIBAAKCAQEA"),
    "b64ec": lambda: b64pem("EC PRIVATE KEY", "MHcCAQEEIB"),
    "azsecret": gen_azsecret,
    "sas": gen_sas,
    "amzsig": lambda: rs(HX, 64),
    "googsig": lambda: rs(HX, 512),
    "amztok": lambda: "IQoJb3JpZ2luX2VjE" + mixed(US, 300).replace("_", "%2F").replace("-", "%2B"),
    "cfsig": lambda: mixed(US, 172).replace("_", "~") + "__",
    "hmac": lambda: rs(HX, 64),
    "railsck": gen_cookie_rails,
    "connectsid": gen_connect_sid,
    "jwe": gen_jwe,
    "jwtrs": gen_jwt_rs,
    "laravel": gen_laravel,
    "b64ghp": gen_b64ghp,
    "wpck": gen_wp,
    "wg": gen_wg,
    "jwkd": gen_jwk_d,
    "tmkey": gen_tm,
    "lo32": lambda: mixed(LO + DG, 32),
    "lo26s": lambda: mixed(LO + DG, 26),
    "hxup32": lambda: rs("0123456789ABCDEF", 32),
    "eth": lambda: "0x" + rs(HX, 64),
    "discordhook": lambda: str(R.randint(10**17, 10**18 - 1)) + "/" + mixed(US, 68),
    "tgbot": lambda: str(R.randint(10**9, 10**10 - 1)) + ":AA" + mixed(US, 33),
    "splunk": uid,
    "hcloud": lambda: mixed(AL, 64),
    "cftoken": lambda: mixed(US, 40),
    "pct": lambda: pw().replace("@", "%40").replace("#", "%23").replace("&", "%26"),
    "pwsafe": lambda: mixed(AL, 8) + R.choice("!*-_.") + mixed(AL, 6),
    "pwat": lambda: mixed(AL, 5) + "@" + mixed(AL, 5) + R.choice("!*") + str(R.randint(10, 99)),
    "b64basic": lambda: base64.b64encode(("ci-bot:" + mixed(AL, 20)).encode()).decode(),
    "b64xat": lambda: base64.b64encode(("x-access-token:" + G["ghs"]()).encode()).decode(),
    "dockerauth": lambda: base64.b64encode(("robot$ci+push:" + mixed(AL, 32)).encode()).decode(),
    "npmauth": lambda: base64.b64encode(("deploy:" + pw()).encode()).decode(),
    "~crtpem": lambda: pem("CERTIFICATE", "MIIDdzCCAl+gAwIBAgIE", 8)[0],
    "~crtpemesc": lambda: pem("CERTIFICATE", "MIIDazCCAlOgAwIBAgIU", 6, sep="\\n")[0],
    "~pubpem": lambda: pem("PUBLIC KEY", "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA", 6)[0],
    "~rsapub": lambda: pem("RSA PUBLIC KEY", "MIIBCgKCAQEA", 5)[0],
    "~csr": lambda: pem("CERTIFICATE REQUEST", "MIICijCCAXICAQAwRTEL", 7)[0],
    "~dh": lambda: pem("DH PARAMETERS", "MIIBCAKCAQEA", 5)[0],
    "~pgppub": lambda: "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBG" + rs(B64, 58) + "\n" + "\n".join(rs(B64, 64) for _ in range(6)) + "\n=" + rs(B64, 4) + "\n-----END PGP PUBLIC KEY BLOCK-----",
    "~ssh2pub": lambda: "---- BEGIN SSH2 PUBLIC KEY ----\nComment: \"rsa-key-20261201\"\nAAAAB3NzaC1yc2EAAAADAQABAAABAQ" + rs(B64, 34) + "\n" + "\n".join(rs(B64, 64) for _ in range(4)) + "\n---- END SSH2 PUBLIC KEY ----",
    "~b64crt": lambda: base64.b64encode((pem("CERTIFICATE", "MIIC/jCCAeagAwIBAgIB", 6)[0] + "\n").encode()).decode(),
    "~sha256": lambda: rs(HX, 64),
    "~sha1": lambda: rs(HX, 40),
    "~md5": lambda: rs(HX, 32),
    "~short": lambda: rs(HX, 7),
    "~sri384": lambda: "sha384-" + b64(48),
    "~sri512": lambda: "sha512-" + b64(64),
    "~sri256": lambda: "sha256-" + b64(32),
    "~h1": lambda: "h1:" + b64(32),
    "~b64_32": lambda: b64(32),
    "~b64_16": lambda: b64(16),
    "~b64_64": lambda: b64(64),
    "~cid": lambda: "bafybei" + rs("abcdefghijklmnopqrstuvwxyz234567", 52),
    "~hex16": lambda: rs(HX, 16),
    "~ulid": lambda: "01" + rs("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 24),
    "~num": lambda: str(R.randint(10**9, 10**12)),
    "~an12": lambda: mixed(AL, 12),
    "~an24": lambda: mixed(AL, 24),
    "~an29": lambda: mixed(AL, 29),
    "~us43": lambda: b64u(32),
    "~ed": lambda: "AAAAC3NzaC1lZDI1NTE5AAAAI" + rs(B64, 43),
    "~rsa": lambda: "AAAAB3NzaC1yc2EAAAADAQABAAABgQ" + rs(B64, 200),
    "~ecdsa": lambda: "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB" + rs(B64, 87) + "=",
    "~fp256": lambda: "SHA256:" + b64(32).rstrip("="),
    "~jwkn": lambda: b64u(256),
    "~wgpub": gen_wg,
    "~age": lambda: "age1" + rs("qpzry9x8gf2tvdw0s3jn54khce6mua7l", 58),
    "~vapid": lambda: "B" + b64u(64)[:86],
    "~ga": lambda: "GA1.2." + str(R.randint(10**8, 10**10)) + "." + str(R.randint(1700000000, 1800000000)),
    "~toolu": lambda: "toolu_01" + mixed(AL, 22),
    "~msg": lambda: "msg_01" + mixed(AL, 22),
    "~req": lambda: "req_011C" + mixed(AL, 20),
    "~chatcmpl": lambda: "chatcmpl-" + mixed(AL, 29),
    "~call": lambda: "call_" + mixed(AL, 24),
    "~pkce": lambda: b64u(32),
    "~state": lambda: b64u(16),
    "~ytid": lambda: mixed(US, 11),
    "~wskey": lambda: b64(16),
    "~amzid2": lambda: b64(56),
    "~cfid": lambda: mixed(US, 56) + "==",
    "~oid": lambda: rs(HX, 24),
    "~cus": lambda: "cus_" + mixed(AL, 14),
    "~evt": lambda: "evt_1" + mixed(AL, 23),
    "~ac": lambda: "AC" + rs(HX, 32),
    "~apka": lambda: "APKA" + rs(UP + DG, 16),
    "~gclient": lambda: str(R.randint(10**11, 10**12)) + "-" + rs(LO + DG, 32) + ".apps.googleusercontent.com",
    "~nar": lambda: "sha256-" + b64(32),
    "~tlsfp": lambda: ":".join(rs("0123456789ABCDEF", 2) for _ in range(32)),
    "~docker": lambda: rs(HX, 64),
})

MARK = re.compile(r"«(~?[a-z0-9_]+)»")


def fill(t):
    secrets = []

    def sub(m):
        name = m.group(1)
        v = G[name]()
        if isinstance(v, tuple):
            v, parts = v
            secrets.extend(parts)
        elif not name.startswith("~"):
            secrets.append(v)
        return v
    return MARK.sub(sub, t), secrets


SCHEMES = [
    ("postgres", "db.acme.internal:5432/orders"), ("postgresql+psycopg2", "pg-primary:5432/app"),
    ("mysql", "mysql.prod.svc:3306/shop"), ("mysql+pymysql", "10.0.4.12/analytics"),
    ("mariadb", "maria01:3306/wiki"), ("mongodb", "mongo-0.mongo:27017,mongo-1.mongo:27017/app?replicaSet=rs0&authSource=admin"),
    ("mongodb+srv", "cluster0.ab1cd.mongodb.net/prod?retryWrites=true&w=majority"), ("redis", "cache.acme.internal:6379/0"),
    ("rediss", "master.redis-prod.abc123.use1.cache.amazonaws.com:6380"), ("amqp", "rabbit.acme.internal:5672/%2Fprod"),
    ("amqps", "b-1234.mq.eu-west-1.amazonaws.com:5671"), ("mqtt", "broker.hivemq.acme.io:1883"),
    ("ftp", "ftp.partner.example.net/outbound/"), ("sftp", "files.acme.io:2222/uploads"),
    ("smtp", "smtp.sendgrid.net:587"), ("smtps", "email-smtp.eu-west-1.amazonaws.com:465"),
    ("imaps", "imap.fastmail.com:993"), ("ldaps", "ldap.corp.acme.io:636"),
    ("https", "nexus.acme.io/repository/pypi/simple"), ("http", "proxy.corp.acme.io:3128"),
    ("wss", "stream.acme.io/v1/feed"), ("socks5h", "10.8.0.1:1080"),
    ("clickhouse", "ch-01.acme.internal:9000/default"), ("nats", "nats.acme.internal:4222"),
    ("rtsp", "192.168.1.64:554/Streaming/Channels/101"), ("snowflake", "acme-xy12345/ANALYTICS/PUBLIC?warehouse=WH"),
    ("neo4j+s", "a1b2c3d4.databases.neo4j.io"), ("sqlserver", "sql01.acme.local:1433?database=erp"),
    ("cockroachdb", "free-tier.gcp-us-central1.cockroachlabs.cloud:26257/defaultdb?sslmode=verify-full"),
    ("svn+ssh", "svn.acme.io/repos/trunk"),
]

USERS = ["app", "admin", "deploy", "svc_orders", "readonly", "postgres", "root", "ci", "default", "elastic"]
URL_CTX = [
    ("env", "DATABASE_URL={u}"), ("yaml", "  url: \"{u}\""), ("json", "{{\"connectionString\": \"{u}\"}}"),
    ("py", "engine = create_engine(\"{u}\")"), ("js", "const client = new Client({{ connectionString: '{u}' }});"),
    ("log", "2026-12-07T10:41:22Z INFO connecting to {u}"), ("prose", "use {u} for the migration"),
    ("shell", "export BROKER_URL='{u}'"), ("toml", "dsn = \"{u}\""), ("cli", "pg_dump \"{u}\" > dump.sql"),
]

POS = []
for i, (scheme, rest) in enumerate(SCHEMES):
    kind, ctx = URL_CTX[i % len(URL_CTX)]
    user = USERS[i % len(USERS)]
    pwg = ["pw", "pct", "an24", "pwsafe", "pwat"][i % 5]
    if scheme in ("redis", "rediss") and i % 2:
        u = scheme + "://:«" + pwg + "»@" + rest
    else:
        u = scheme + "://" + user + ":«" + pwg + "»@" + rest
    POS.append((kind + "-url-" + scheme, ctx.format(u=u)))

POS += [
    # connection strings that are not URLs
    ("jdbc", "spring.datasource.url=jdbc:postgresql://db:5432/app?user=app&password=«pw»&ssl=true"),
    ("jdbc", "jdbc:sqlserver://sql01.acme.local:1433;databaseName=erp;user=erp_app;password=«pw»;encrypt=true"),
    ("jdbc", "jdbc:oracle:thin:scott/«pwsafe»@//ora-prod.acme.local:1521/ORCLPDB1"),
    ("jdbc", "url: jdbc:mysql://mysql:3306/shop?useSSL=false&user=shop&password=«pw»"),
    ("ado", "Server=tcp:acme.database.windows.net,1433;Initial Catalog=erp;User ID=erpadmin;Pwd=«pw»;Encrypt=True;"),
    ("ado", "\"Redis\": \"acme.redis.cache.windows.net:6380,password=«azkey»,ssl=True,abortConnect=False\""),
    ("ado", "DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey=«azkey»;EndpointSuffix=core.windows.net"),
    ("ado", "Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=«us43»="),
    ("ado", "HostName=acme-hub.azure-devices.net;DeviceId=sensor-17;SharedAccessKey=«us43»="),
    ("odbc", "DRIVER={ODBC Driver 18 for SQL Server};SERVER=sql01;DATABASE=erp;UID=report;PWD={«pwsafe»}"),
    ("dsn", "dsn := \"host=db port=5432 user=app password=«pw» dbname=orders sslmode=disable\""),
    ("dsn", "cfg.FormatDSN() // app:«pwsafe»@tcp(mysql:3306)/shop?parseTime=true"),
    ("dsn", "DSN=\"orders_rw:«pwsafe»@tcp(10.0.3.7:3306)/orders?tls=true\""),
    ("oracle", "sqlplus system/«pwsafe»@//ora01:1521/XEPDB1"),
    ("libpq", "PGPASSWORD=«pw» psql -h db.acme.internal -U app orders"),
    # signed URLs and tokens in query strings
    ("s3-presign", "https://acme-exports.s3.eu-west-1.amazonaws.com/report.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=«akia»%2F20261207%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20261207T101500Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=«amzsig»"),
    ("s3-presign", "curl -o db.dump 'https://backups.s3.amazonaws.com/db.dump?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=«asia»%2F20261207%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261207T080000Z&X-Amz-Expires=900&X-Amz-Security-Token=«amztok»&X-Amz-SignedHeaders=host&X-Amz-Signature=«amzsig»'"),
    ("s3-presign", "{\"upload_url\": \"https://uploads.acme.io/tmp/f.bin?X-Amz-Signature=«amzsig»&X-Amz-Expires=600&X-Amz-Date=20261207T101500Z\"}"),
    ("gcs-signed", "https://storage.googleapis.com/acme-ml/model.bin?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=signer%40acme-prod.iam.gserviceaccount.com%2F20261207%2Fauto%2Fstorage%2Fgoog4_request&X-Goog-Date=20261207T101500Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature=«googsig»"),
    ("azure-sas", "https://acmelogs.blob.core.windows.net/exports/app.log?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-12-31T00:00:00Z&st=2026-12-01T00:00:00Z&spr=https&sig=«sas»"),
    ("azure-sas", "AZURE_STORAGE_SAS_TOKEN=\"?sv=2021-06-08&ss=bfqt&srt=sco&sp=rwdlacupitfx&se=2027-01-01T00:00:00Z&sig=«sas»\""),
    ("azure-sas", "azcopy copy ./dist 'https://acmeweb.blob.core.windows.net/$web?sp=racwdl&st=2026-12-07T09:00:00Z&se=2026-12-08T09:00:00Z&spr=https&sv=2022-11-02&sr=c&sig=«sas»' --recursive"),
    ("cloudfront", "https://d111111abcdef8.cloudfront.net/video.mp4?Expires=1796000000&Signature=«cfsig»&Key-Pair-Id=«~apka»"),
    ("query-token", "GET /api/v2/export?format=csv&access_token=«jwtrs» HTTP/1.1"),
    ("query-token", "wget -q 'https://circleci.com/api/v1.1/project/gh/acme/web/latest/artifacts?circle-token=«hex40»'"),
    ("query-token", "https://gitlab.acme.io/api/v4/projects/12/repository/archive.zip?private_token=«glpat»"),
    ("query-token", "fetch(`https://api.acme.io/v1/items?api_key=«an32»&page=${page}`)"),
    ("query-token", "https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key=«aiza»"),
    ("query-token", "requests.get(\"https://api.openweathermap.org/data/2.5/weather?q=Paris&appid=«hex32»\")"),
    ("query-token", "ws = new WebSocket(\"wss://rt.acme.io/socket?token=«jwt»&vsn=2.0.0\")"),
    ("query-token", "https://app.acme.io/oauth/callback#access_token=«ya29»&token_type=Bearer&expires_in=3599"),
    ("query-token", "Redirecting to https://acme.io/auth/done?id_token=«jwtrs»&state=«~state»"),
    ("query-token", "curl \"https://api.hubapi.com/contacts/v1/lists/all/contacts/all?hapikey=«uuid»\""),
    ("query-token", "POST https://oauth2.googleapis.com/token?client_id=«~gclient»&client_secret=«gocspx»&refresh_token=«ya29»&grant_type=refresh_token"),
    ("query-token", "https://hooks.acme.io/ingest?signature=«hmac»&ts=1796000000"),
    ("query-token", "https://grafana.acme.io/api/dashboards?auth=«glsa»"),
    ("webhook", "DISCORD_WEBHOOK=https://discord.com/api/webhooks/«discordhook»"),
    ("webhook", "curl -s \"https://api.telegram.org/bot«tgbot»/sendMessage?chat_id=-100123&text=done\""),
    ("webhook", "https://chat.googleapis.com/v1/spaces/AAAA7xyzAbC/messages?key=«aiza»&token=«us43»"),
    ("webhook", "notify:\n  url: https://mattermost.acme.io/hooks/«lo26s»"),
    # cloud and CI credentials in their native config files
    ("kubeconfig", "users:\n- name: prod-admin\n  user:\n    client-certificate-data: «~b64crt»\n    client-key-data: «b64pkcs1»"),
    ("kubeconfig", "users:\n- name: ci\n  user:\n    token: «jwtrs»"),
    ("kubeconfig", "- name: legacy\n  user:\n    auth-provider:\n      name: oidc\n      config:\n        client-id: kubernetes\n        client-secret: «an32»\n        id-token: «jwtrs»\n        idp-issuer-url: https://dex.acme.io\n        refresh-token: «lo26s»"),
    ("kubeconfig", "- name: basic\n  user:\n    username: admin\n    password: «pwsafe»"),
    ("docker-config", "{\n  \"auths\": {\n    \"ghcr.io\": {\n      \"auth\": \"«b64xat»\"\n    }\n  }\n}"),
    ("docker-config", "{\"auths\": {\"registry.acme.io\": {\"auth\": \"«dockerauth»\", \"email\": \"ci@acme.io\"}}, \"credsStore\": \"\"}"),
    ("docker-config", "{\"auths\": {\"acme.azurecr.io\": {\"identitytoken\": \"«jwtrs»\"}}}"),
    ("npmrc", "@acme:registry=https://npm.pkg.github.com\n//npm.pkg.github.com/:_authToken=«ghp»"),
    ("npmrc", "registry=https://nexus.acme.io/repository/npm/\n_auth=«npmauth»\nalways-auth=true"),
    ("npmrc", "//nexus.acme.io/repository/npm/:username=deploy\n//nexus.acme.io/repository/npm/:_password=«npmauth»"),
    ("pypirc", "[testpypi]\nrepository = https://test.pypi.org/legacy/\nusername = __token__\npassword = «pypi»"),
    ("pypirc", "[acme]\nrepository = https://nexus.acme.io/repository/pypi-internal/\nusername = deploy\npassword = «pw»"),
    ("poetry", "poetry config http-basic.acme deploy «pw»"),
    ("poetry", "[http-basic.acme]\nusername = \"deploy\"\npassword = \"«pwsafe»\""),
    ("netrc", "machine api.heroku.com login ann@acme.io password «uuid»"),
    ("netrc", "machine nexus.acme.io\n  login deploy\n  password «pwsafe»\nmachine github.com\n  login ann-lee\n  password «ghp»"),
    ("gcloud", "{\n  \"type\": \"service_account\",\n  \"project_id\": \"acme-prod\",\n  \"private_key_id\": \"«~sha1»\",\n  \"private_key\": \"«pkcs8esc»\\n\",\n  \"client_email\": \"ci@acme-prod.iam.gserviceaccount.com\"\n}"),
    ("gcloud", "GOOGLE_CREDENTIALS='{\"type\":\"service_account\",\"private_key\":\"«pkcs8esc»\\n\",\"client_email\":\"tf@acme.iam.gserviceaccount.com\"}'"),
    ("gcloud", "{\"account\": \"\", \"client_id\": \"«~gclient»\", \"client_secret\": \"«gocspx»\", \"refresh_token\": \"«ya29»\", \"type\": \"authorized_user\"}"),
    ("azure", "{\n  \"appId\": \"«~sha1»\",\n  \"displayName\": \"sp-terraform\",\n  \"password\": \"«azsecret»\",\n  \"tenant\": \"«~uuid»\"\n}"),
    ("azure", "AZURE_CLIENT_SECRET=«azsecret»"),
    ("azure", "{\"clientId\": \"3f2a9c1e-8f0b-4a61-9d2e-5b7c0a1d2e3f\", \"clientSecret\": \"«azsecret»\", \"subscriptionId\": \"0b1c2d3e-4f50-4a61-8b7c-9d0e1f2a3b4c\", \"tenantId\": \"1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d\"}"),
    ("azure", "az login --service-principal -u http://sp-ci -p «azsecret» --tenant acme.onmicrosoft.com"),
    ("tfvars", "hcloud_token = \"«hcloud»\"\nlocation     = \"fsn1\""),
    ("tfvars", "cloudflare_api_token = \"«cftoken»\"\nzone_id = \"«~md5»\""),
    ("tfvars", "db_password      = \"«pw»\"\ndb_instance_type = \"db.t4g.medium\""),
    ("tfvars", "datadog_api_key = \"«hex32»\"\ndatadog_app_key = \"«hex40»\""),
    ("terraform", "provider \"azurerm\" {\n  features {}\n  client_id     = \"«uuid»\"\n  client_secret = \"«azsecret»\"\n}"),
    ("helm", "postgresql:\n  auth:\n    postgresPassword: «pwsafe»\n    username: app\n    password: «pw»\n    database: app"),
    ("helm", "redis:\n  architecture: standalone\n  auth:\n    enabled: true\n    password: \"«an24»\""),
    ("helm", "helm upgrade --install grafana grafana/grafana --set adminPassword='«pwsafe»' -n monitoring"),
    ("helm", "mongodb:\n  auth:\n    rootPassword: «pw»\n    replicaSetKey: «an32»"),
    ("gitconfig", "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic «b64xat»"),
    ("gitconfig", "git -c http.extraHeader=\"Authorization: Bearer «glpat»\" clone https://gitlab.acme.io/web.git"),
    ("nuget", "<packageSourceCredentials>\n  <acme>\n    <add key=\"Username\" value=\"deploy\" />\n    <add key=\"ClearTextPassword\" value=\"«pwsafe»\" />\n  </acme>\n</packageSourceCredentials>"),
    ("bundler", "BUNDLE_GEMS__CONTRIBSYS__COM: \"acme:«hex32»\""),
    ("bundler", "bundle config set --global rubygems.pkg.github.com ann-lee:«ghp»"),
    ("databricks", "[DEFAULT]\nhost = https://adb-123.4.azuredatabricks.net\ntoken = «dapi»"),
    ("sentryclirc", "[auth]\ntoken=«sntryu»"),
    ("boto", "[Credentials]\ngs_oauth2_refresh_token = «ya29»"),
    ("redis-conf", "bind 0.0.0.0\nrequirepass «an24»\nmasterauth «an24»"),
    ("msmtp", "account gmail\nhost smtp.gmail.com\nport 587\nauth on\nuser ann@acme.io\npassword «lo26s»"),
    ("muttrc", "set smtp_url = \"smtps://ann@acme.io@smtp.fastmail.com:465/\"\nset smtp_pass = \"«an24»\""),
    ("fstab", "//nas.local/backup /mnt/backup cifs username=backup,password=«pwsafe»,uid=1000,iocharset=utf8 0 0"),
    ("postfix", "[smtp.gmail.com]:587 alerts@acme.io:«lo26s»"),
    ("hostapd", "interface=wlan0\nssid=acme-guest\nwpa=2\nwpa_passphrase=«pwsafe»"),
    ("wireguard", "[Interface]\nPrivateKey = «wg»\nAddress = 10.8.0.2/32\n\n[Peer]\nPublicKey = «~wgpub»\nPresharedKey = «wg»\nEndpoint = vpn.acme.io:51820"),
    ("gha", "- uses: actions/checkout@v4\n  with:\n    token: «ghp»"),
    ("circleci", "circleci setup --token «hex40» --host https://circleci.com --no-prompt"),
    ("gitlab-runner", "[[runners]]\n  name = \"docker-01\"\n  url = \"https://gitlab.acme.io/\"\n  token = \"«glrt»\"\n  executor = \"docker\""),
    ("vault", "VAULT_TOKEN=«hvs» vault kv get secret/app"),
    # private keys in every form
    ("pem", "«pkcs1»"),
    ("pem", "key.pem:\n«pkcs8»"),
    ("pem", "tls.key: |\n«ec»"),
    ("pem", "«encpk»"),
    ("pem", "«pkcs1enc»"),
    ("pem", "«dsa»"),
    ("pem", "$ cat ~/.ssh/id_ed25519\n«openssh»"),
    ("pem", "{\"deploy_key\": \"«opensshesc»\\n\"}"),
    ("pem", "«putty3»"),
    ("pem", "«putty2»"),
    ("pem", "«ssh2enc»"),
    ("pem", "«pgppriv»"),
    ("pem", "SSL_KEY=\"«pkcs8esc»\""),
    ("pem", "{\"message\": \"{\\\"private_key\\\": \\\"«pkcs8esc2»\\\\n\\\"}\"}"),
    ("pem", "«pkcs1crlf»"),
    ("pem", "here is the key you asked for: «pkcs1sp» - keep it safe"),
    ("pem", "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.crt: «~b64crt»\n  tls.key: «b64ec»"),
    ("pem", "private_key = <<EOT\n«ec»\nEOT"),
    ("pem", "KEY = \"\"\"\n«pkcs8»\n\"\"\""),
    ("jwk", "{\"kty\": \"EC\", \"crv\": \"P-256\", \"x\": \"«~us43»\", \"y\": \"«~us43»\", \"d\": \"«jwkd»\", \"kid\": \"sig-2026\"}"),
    ("jwk", "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"d\":\"«jwkd»\",\"x\":\"«~us43»\"}"),
    ("tendermint", "{\"address\": \"«~sha1»\", \"pub_key\": {\"type\": \"tendermint/PubKeyEd25519\", \"value\": \"«~b64_32»\"}, \"priv_key\": {\"type\": \"tendermint/PrivKeyEd25519\", \"value\": \"«tmkey»\"}}"),
    ("eth", "PRIVATE_KEY=«eth»"),
    ("eth", "const wallet = new ethers.Wallet(\"«eth»\", provider);"),
    # JWTs and session cookies in logs
    ("log-jwt", "2026-12-07 10:41:22,311 DEBUG urllib3 headers={'Authorization': 'Bearer «jwtrs»', 'Accept': 'application/json'}"),
    ("log-jwt", "{\"level\":\"debug\",\"ts\":1796000000.12,\"msg\":\"outgoing request\",\"headers\":{\"authorization\":[\"Bearer «jwtrs»\"]}}"),
    ("log-jwt", "10.0.0.7 - - [07/Dec/2026:10:41:22 +0000] \"GET /api/me?jwt=«jwt» HTTP/1.1\" 200 512 \"-\" \"okhttp/4.12\""),
    ("log-jwt", "time=2026-12-07T10:41:22Z level=info msg=\"session refreshed\" user=42 token=«jwtrs»"),
    ("log-jwt", "I1207 10:41:22.311 auth.go:88] id token «jwtrs» accepted for alice"),
    ("log-cookie", "> Cookie: sessionid=«lo32»; csrftoken=«an32»; theme=dark"),
    ("log-cookie", "< Set-Cookie: __Host-next-auth.session-token=«jwe»; Path=/; HttpOnly; Secure; SameSite=Lax"),
    ("log-cookie", "Set-Cookie: _acme_session=«railsck»; path=/; secure; HttpOnly; SameSite=Lax"),
    ("log-cookie", "cookie: connect.sid=«connectsid»"),
    ("log-cookie", "Cookie: laravel_session=«laravel»; XSRF-TOKEN=«laravel»"),
    ("log-cookie", "Cookie: PHPSESSID=«lo26s»; _ga=«~ga»"),
    ("log-cookie", "JSESSIONID=«hxup32»; Path=/app; HttpOnly"),
    ("log-cookie", "curl -b 'wordpress_logged_in_0a1b2c=«wpck»' https://blog.acme.io/wp-admin/"),
    ("log-cookie", "document.cookie = \"auth_token=«jwtrs»; path=/; max-age=86400\";"),
    # secrets split across string concatenation
    ("concat", "OPENAI_API_KEY = \"sk-proj-\" + \"«us40»\" + \"«us40»\""),
    ("concat", "const token = 'ghp_' + '«an24»' + 'Qz81Lm9Xk2Pa';"),
    ("concat", "password = (\"«pwsafe»\"\n            \"«pwsafe»\")"),
    ("concat", "String secret = \"«an24»\" +\n    \"«an24»\";"),
    ("concat", "const apiKey = \"«an20»\" + \"«an20»\""),
    ("concat", "$stripe = 'sk_live_' . '«an24»' . '«an24»';"),
    ("concat", "#define API_SECRET \"«an20»\" \\\n                   \"«an20»\""),
    ("concat", "TOKEN=\"xoxb-«hex24»\"'«an24»'"),
    ("concat", "let key = [\"AKIA\", \"«up20»\"].join(\"\");"),
    ("concat", "aws_secret = \"\".join([\"«an20»\", \"«an20»\"])"),
    ("obfuscated", "token = base64.b64decode(\"«b64ghp»\").decode()"),
    ("obfuscated", "const key = atob('«b64ghp»');"),
    # shell history
    ("history", "  812  mysql -h db.acme.internal -u root -p«pwsafe» shop < dump.sql"),
    ("history", "  813  sshpass -p '«pwsafe»' ssh -o StrictHostKeyChecking=no deploy@10.0.0.12"),
    ("history", "  814  export AWS_SECRET_ACCESS_KEY=«awssec»"),
    ("history", "  815  docker login registry.acme.io -u ci --password «an32»"),
    ("history", "  816  mongosh \"mongodb+srv://admin:«pwsafe»@cluster0.ab1cd.mongodb.net/\""),
    ("history", "  817  kubectl create secret generic db --from-literal=username=app --from-literal=password='«pwsafe»'"),
    ("history", "  818  gh secret set NPM_TOKEN --body \"«npm»\" --repo acme/web"),
    ("history", "  819  heroku config:set STRIPE_SECRET_KEY=«sklive» -a acme-web"),
    ("history", "  820  aws ssm put-parameter --name /prod/db/password --value '«pwsafe»' --type SecureString"),
    ("history", "  821  vault kv put secret/prod/api key=«an32»"),
    ("history", "  822  htpasswd -b -c /etc/nginx/.htpasswd admin «pwsafe»"),
    ("history", "  823  echo '«pwsafe»' | sudo -S systemctl restart nginx"),
    ("history", "  824  wget --user=deploy --password=«pwsafe» https://nexus.acme.io/repo/app.jar"),
    ("history", "  825  smbclient //nas/backup -U backup%«pwsafe»"),
    ("history", "  826  fly secrets set DATABASE_URL=postgres://app:«pwsafe»@db.internal:5432/app"),
    ("history", "  827  doppler secrets set SENDGRID_API_KEY=«sg»"),
    ("history", "  828  xfreerdp /v:win01.corp /u:Administrator /p:«pwsafe»"),
    ("history", "  829  psql \"host=db user=app password=«pwsafe» dbname=orders\""),
    ("history", "  830  redis-cli -h cache -a «an24» FLUSHALL"),
    ("history", "  831  curl -u admin:«pwsafe» -X POST http://jenkins:8080/job/deploy/build"),
    ("history", "  832  mosquitto_pub -h broker -u sensor -P «pwsafe» -t temp -m 21"),
    ("history", "  833  ldapsearch -x -H ldaps://ldap.corp -D cn=admin,dc=corp -w «pwsafe» '(uid=ann)'"),
    ("history", "  834  net use \\\\fs01\\share /user:CORP\\svc_backup «pwsafe»"),
    ("history", "  835  op item create --category=login --title=db password=«pwsafe»"),
    ("history", "  836  git clone https://ann-lee:«ghp»@github.com/acme/infra.git"),
    ("history", "  837  echo \"«npm»\" > ~/.npm-token"),
    # stack traces and HTTP dumps
    ("trace", "Traceback (most recent call last):\n  File \"/app/db.py\", line 14, in <module>\n    engine = create_engine(\"postgresql://app:«pwsafe»@db:5432/app\")\nsqlalchemy.exc.OperationalError: could not translate host name \"db\""),
    ("trace", "Traceback (most recent call last):\n  File \"/app/main.py\", line 9, in <module>\n    client = OpenAI(api_key=\"«oai»\")\nopenai.AuthenticationError: Error code: 401"),
    ("trace", "org.postgresql.util.PSQLException: FATAL: no pg_hba.conf entry\n\tat org.postgresql.Driver.connect(Driver.java:285)\nCaused by: url=jdbc:postgresql://db:5432/app?user=app&password=«pwsafe»"),
    ("trace", "AxiosError: Request failed with status code 403\n    at settle (node_modules/axios/lib/core/settle.js:19:12) {\n  config: {\n    headers: {\n      Accept: 'application/json',\n      Authorization: 'Bearer «sklive»'\n    },\n    url: 'https://api.stripe.com/v1/charges'\n  }\n}"),
    ("trace", "panic: unexpected status 401\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:31 +0x1d\nconfig: main.Config{Endpoint:\"https://api.acme.io\", Token:\"«an40»\"}"),
    ("trace", "Faraday::UnauthorizedError: the server responded with status 401\nrequest headers: {\"Authorization\"=>\"token «ghp»\", \"User-Agent\"=>\"Faraday v2.9\"}"),
    ("trace", "Error: Config { endpoint: \"https://api.acme.io\", api_key: \"«an32»\", timeout: 30s }"),
    ("trace", "PDOException: SQLSTATE[HY000] [1045] Access denied\n#0 /var/www/app/db.php(12): PDO->__construct('mysql:host=db;d...', 'shop', '«pwsafe»')\n#1 {main}"),
    ("trace", "%{host: \"db\", username: \"app\", password: \"«pwsafe»\", pool_size: 10}"),
    ("http-dump", "> POST /v1/messages HTTP/2\n> Host: api.anthropic.com\n> x-api-key: «ant»\n> anthropic-version: 2023-06-01\n> content-type: application/json"),
    ("http-dump", "POST /oauth/token HTTP/1.1\r\nHost: login.acme.io\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\ngrant_type=client_credentials&client_id=ci-runner&client_secret=«an40»"),
    ("http-dump", "POST /login HTTP/1.1\nHost: admin.acme.io\nContent-Type: application/x-www-form-urlencoded\n\nusername=admin&password=«pwsafe»&remember=1"),
    ("http-dump", "HTTP/1.1 200 OK\nContent-Type: application/json\n\n{\"access_token\":\"«ya29»\",\"expires_in\":3599,\"refresh_token\":\"«lo32»\",\"token_type\":\"Bearer\"}"),
    ("http-dump", "send: b'GET /api/v1/status HTTP/1.1\\r\\nHost: api.acme.io\\r\\nAuthorization: Basic «basic»\\r\\n\\r\\n'"),
    ("http-dump", "Authorization: AWS4-HMAC-SHA256 Credential=«akia»/20261207/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=«amzsig»"),
    ("http-dump", "x-amz-security-token: «amztok»"),
    ("http-dump", "Authorization: Splunk «splunk»"),
    ("http-dump", "Authorization: GenieKey «uuid»"),
    ("http-dump", "Ocp-Apim-Subscription-Key: «hex32»"),
    ("http-dump", "Authorization: OAuth oauth_consumer_key=\"«an24»\", oauth_token=\"«an40»\", oauth_signature_method=\"HMAC-SHA1\", oauth_signature=\"«us43»\""),
    ("http-dump", "Proxy-Authorization: Basic «basic»"),
    ("har", "{\"request\": {\"method\": \"GET\", \"headers\": [{\"name\": \"Authorization\", \"value\": \"Bearer «jwtrs»\"}, {\"name\": \"Accept\", \"value\": \"*/*\"}]}}"),
    ("har", "\"cookies\": [{\"name\": \"session\", \"value\": \"«lo32»\", \"httpOnly\": true}]"),
    ("postman", "{\"key\": \"apiKey\", \"value\": \"«an32»\", \"type\": \"secret\", \"enabled\": true}"),
    ("k8s-env", "env:\n  - name: STRIPE_SECRET_KEY\n    value: «sklive»\n  - name: LOG_LEVEL\n    value: info"),
]

NEG = [
    # hashes, checksums, lockfiles, SRI
    ("sha256sum", "«~sha256»  vigil_1.4.2_linux_amd64.tar.gz"),
    ("sha256sum", "SHA256 (node-v22.11.0-darwin-arm64.tar.gz) = «~sha256»"),
    ("md5sum", "«~md5»  backup-2026-12-07.sql.gz"),
    ("git", "commit «~sha1»\nAuthor: Ann Lee <ann@acme.io>\nDate:   Mon Dec 7 10:41:22 2026 +0000"),
    ("git", "Merge: «~short» «~short»"),
    ("git", "$ git rev-parse HEAD\n«~sha1»"),
    ("git", "https://github.com/acme/web/commit/«~sha1»"),
    ("git", "  - uses: actions/checkout@«~sha1» # v4.2.2"),
    ("git", "[main «~short»] fix: retry on 503"),
    ("gosum", "golang.org/x/crypto v0.31.0 «~h1»"),
    ("gosum", "github.com/klauspost/compress v1.17.11/go.mod «~h1»"),
    ("cargo-lock", "[[package]]\nname = \"serde\"\nversion = \"1.0.215\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"«~sha256»\""),
    ("npm-lock", "\"node_modules/lodash\": {\n  \"version\": \"4.17.21\",\n  \"resolved\": \"https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz\",\n  \"integrity\": \"«~sri512»\"\n}"),
    ("yarn-lock", "lodash@^4.17.21:\n  version \"4.17.21\"\n  resolved \"https://registry.yarnpkg.com/lodash/-/lodash-4.17.21.tgz#«~sha1»\"\n  integrity «~sri512»"),
    ("pnpm-lock", "  /lodash@4.17.21:\n    resolution: {integrity: «~sri512»}"),
    ("poetry-lock", "files = [\n    {file = \"requests-2.32.3-py3-none-any.whl\", hash = \"sha256:«~sha256»\"},\n]"),
    ("requirements", "requests==2.32.3 \\\n    --hash=sha256:«~sha256» \\\n    --hash=sha256:«~sha256»"),
    ("composer-lock", "\"dist\": {\"type\": \"zip\", \"url\": \"https://api.github.com/repos/laravel/framework/zipball/«~sha1»\", \"reference\": \"«~sha1»\", \"shasum\": \"\"}"),
    ("flake-lock", "\"locked\": {\"lastModified\": 1733000000, \"narHash\": \"«~nar»\", \"owner\": \"NixOS\", \"repo\": \"nixpkgs\", \"rev\": \"«~sha1»\", \"type\": \"github\"}"),
    ("tf-lock", "provider \"registry.terraform.io/hashicorp/aws\" {\n  version = \"5.80.0\"\n  hashes = [\n    \"«~h1»\",\n    \"zh:«~sha256»\",\n  ]\n}"),
    ("bazel", "http_archive(\n    name = \"rules_go\",\n    sha256 = \"«~sha256»\",\n    urls = [\"https://github.com/bazelbuild/rules_go/releases/download/v0.50.1/rules_go-v0.50.1.zip\"],\n)"),
    ("brew", "  url \"https://github.com/acme/cli/archive/v1.2.0.tar.gz\"\n  sha256 \"«~sha256»\""),
    ("helm-lock", "dependencies:\n- name: postgresql\n  repository: oci://registry-1.docker.io/bitnamicharts\n  version: 16.2.1\ndigest: sha256:«~sha256»"),
    ("lfs", "version https://git-lfs.github.com/spec/v1\noid sha256:«~sha256»\nsize 73481923"),
    ("docker", "FROM python:3.12-slim@sha256:«~sha256»"),
    ("docker", "Digest: sha256:«~sha256»\nStatus: Downloaded newer image for nginx:1.27"),
    ("docker", "CONTAINER ID   IMAGE\n«~docker»   redis:7"),
    ("sri", "<script src=\"https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/js/bootstrap.bundle.min.js\" integrity=\"«~sri384»\" crossorigin=\"anonymous\"></script>"),
    ("sri", "<link rel=\"stylesheet\" href=\"/assets/app.css\" integrity=\"«~sri256»\">"),
    ("csp", "Content-Security-Policy: script-src 'self' '«~sri256»' 'nonce-«~b64_16»'"),
    ("magnet", "magnet:?xt=urn:btih:«~sha1»&dn=ubuntu-24.04.iso"),
    ("ipfs", "ipfs://«~cid»/metadata.json"),
    ("http-hash", "ETag: \"«~md5»\"\nContent-MD5: «~b64_16»"),
    ("http-hash", "Digest: sha-256=«~b64_32»"),
    ("http-hash", "X-Hub-Signature-256: sha256=«~sha256»"),
    ("http-hash", "x-amz-id-2: «~amzid2»\nx-amz-request-id: «~hex16»"),
    ("http-hash", "X-Amz-Cf-Id: «~cfid»"),
    ("http-hash", "Sec-WebSocket-Key: «~wskey»"),
    ("fp", "The key fingerprint is «~fp256» ann@laptop"),
    ("fp", "SHA256 Fingerprint=«~tlsfp»"),
    # ids of objects and requests
    ("ids", "traceparent: 00-«~md5»-«~hex16»-01"),
    ("ids", "X-Request-Id: «~uuid»"),
    ("ids", "{\"id\": \"«~toolu»\", \"type\": \"tool_use\", \"name\": \"bash\", \"input\": {\"command\": \"ls\"}}"),
    ("ids", "{\"id\": \"«~msg»\", \"type\": \"message\", \"role\": \"assistant\", \"model\": \"claude-sonnet-4\"}"),
    ("ids", "request-id: «~req»"),
    ("ids", "{\"id\": \"«~chatcmpl»\", \"object\": \"chat.completion\", \"created\": 1796000000}"),
    ("ids", "\"tool_calls\": [{\"id\": \"«~call»\", \"type\": \"function\", \"function\": {\"name\": \"get_weather\"}}]"),
    ("ids", "customer: «~cus», event: «~evt»"),
    ("ids", "TWILIO_ACCOUNT_SID=«~ac»"),
    ("ids", "db.users.find({_id: ObjectId(\"«~oid»\")})"),
    ("ids", "\"job_id\": \"«~ulid»\""),
    ("ids", "GOOGLE_CLIENT_ID=«~gclient»"),
    ("ids", "\"tenantId\": \"«~uuid»\", \"subscriptionId\": \"«~uuid»\""),
    ("ids", "metadata:\n  uid: «~uuid»\n  resourceVersion: \"48213\""),
    ("ids", "Key-Pair-Id: «~apka»"),
    # base64 that is no secret
    ("base64", "<img src=\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9h«~b64_64»\" />"),
    ("base64", "src: url(data:font/woff2;base64,d09GMgABAAAAA«~b64_64»)"),
    ("base64", "binaryData:\n  logo.png: iVBORw0KGgoAAAANSUhEUgAA«~b64_64»"),
    ("base64", "Content-Transfer-Encoding: base64\n\nSGVsbG8gQW5uLAoKVGhlIHJlcG9ydCBpcyBhdHRhY2hlZC4KCkJlc3QsCkJvYgo="),
    ("base64", "echo 'eyJraW5kIjoiQ29uZmlnTWFwIiwibmFtZSI6ImFwcCJ9' | base64 -d"),
    ("base64", "\"payload\": \"eyJldmVudCI6InB1c2giLCJyZWYiOiJyZWZzL2hlYWRzL21haW4ifQ==\""),
    ("base64", "\"alg_header\": \"eyJhbGciOiJSUzI1NiIsImtpZCI6IjIwMjYtMTIifQ\""),
    ("base64", "cursor=eyJpZCI6MTIzNDUsInRzIjoxNzk2MDAwMDAwfQ%3D%3D&limit=50"),
    # public keys and certificates
    ("pubkey", "ssh-ed25519 «~ed» ann@laptop"),
    ("pubkey", "github.com ssh-rsa «~rsa»"),
    ("pubkey", "|1|«~b64_16»=|«~b64_16» ecdsa-sha2-nistp256 «~ecdsa»"),
    ("pubkey", "«~pubpem»"),
    ("pubkey", "«~rsapub»"),
    ("pubkey", "«~crtpem»"),
    ("pubkey", "ca.crt: |\n«~crtpem»"),
    ("pubkey", "{\"ca\": \"«~crtpemesc»\\n\", \"insecure_skip_verify\": false}"),
    ("pubkey", "«~csr»"),
    ("pubkey", "«~dh»"),
    ("pubkey", "«~pgppub»"),
    ("pubkey", "«~ssh2pub»"),
    ("pubkey", "clusters:\n- cluster:\n    certificate-authority-data: «~b64crt»\n    server: https://10.0.0.1:6443\n  name: prod"),
    ("pubkey", "{\"keys\": [{\"kty\": \"RSA\", \"use\": \"sig\", \"kid\": \"«~sha1»\", \"n\": \"«~jwkn»\", \"e\": \"AQAB\", \"alg\": \"RS256\"}]}"),
    ("pubkey", "{\"kty\": \"EC\", \"crv\": \"P-256\", \"x\": \"«~us43»\", \"y\": \"«~us43»\", \"use\": \"sig\"}"),
    ("pubkey", "[Peer]\nPublicKey = «~wgpub»\nAllowedIPs = 10.8.0.0/24\nEndpoint = vpn.acme.io:51820"),
    ("pubkey", "age-recipients:\n  - «~age»"),
    ("pubkey", "VAPID_PUBLIC_KEY=«~vapid»"),
    ("pubkey", "authorized_keys:\n  - ecdsa-sha2-nistp256 «~ecdsa» ci@build"),
    # documented examples and placeholders
    ("example", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("example", "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("example", "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"),
    ("placeholder", "DATABASE_URL=postgres://${PGUSER}:${PGPASSWORD}@${PGHOST}:5432/${PGDATABASE}"),
    ("placeholder", "MONGO_URI=mongodb+srv://<username>:<password>@cluster0.mongodb.net/?retryWrites=true"),
    ("placeholder", "url: redis://:{{ .Values.redis.password }}@redis-master:6379/0"),
    ("placeholder", "REDIS_URL=redis://:$REDIS_PASSWORD@cache:6379"),
    ("placeholder", "git clone https://oauth2:${CI_JOB_TOKEN}@gitlab.acme.io/acme/web.git"),
    ("placeholder", "git remote set-url origin https://x-access-token:${{ secrets.GITHUB_TOKEN }}@github.com/acme/web.git"),
    ("placeholder", "https://api.acme.io/v1/items?api_key=YOUR_API_KEY&page=1"),
    ("placeholder", "curl \"https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key=$GOOGLE_MAPS_KEY\""),
    ("placeholder", "?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-12-31&sig=<signature>"),
    ("placeholder", "Authorization: Bearer <access-token>"),
    ("placeholder", "Authorization: Bearer {{token}}"),
    ("placeholder", "Authorization: Bearer $(gcloud auth print-access-token)"),
    ("placeholder", "//npm.pkg.github.com/:_authToken=${NODE_AUTH_TOKEN}"),
    ("placeholder", "mysql -h db -u root -p\"$MYSQL_ROOT_PASSWORD\" shop"),
    ("placeholder", "sshpass -p \"$SSHPASS\" ssh deploy@10.0.0.12"),
    ("placeholder", "export OPENAI_API_KEY=\"$(op read op://Private/OpenAI/credential)\""),
    ("placeholder", "export GITHUB_TOKEN=$(gh auth token)"),
    ("placeholder", "curl -u \"$NEXUS_USER:$NEXUS_PASS\" https://nexus.acme.io/service/rest/v1/status"),
    ("placeholder", "docker login ghcr.io -u ann-lee --password-stdin < ~/.ghcr-token"),
    ("placeholder", "kubectl create secret generic db --from-literal=password=\"$(openssl rand -base64 24)\""),
    ("placeholder", "hcloud_token = var.hcloud_token"),
    ("placeholder", "password = random_password.db.result"),
    ("placeholder", "client_secret = data.azurerm_key_vault_secret.sp.value"),
    ("placeholder", "auth:\n  existingSecret: postgres-credentials\n  secretKeys:\n    adminPasswordKey: postgres-password"),
    ("placeholder", "redis:\n  auth:\n    enabled: true\n    password: \"\"\n    existingSecret: redis-auth"),
    ("placeholder", "{\"auths\": {\"https://index.docker.io/v1/\": {}}, \"credsStore\": \"desktop\"}"),
    ("placeholder", "{\"credHelpers\": {\"gcr.io\": \"gcloud\", \"123456789012.dkr.ecr.eu-west-1.amazonaws.com\": \"ecr-login\"}}"),
    ("placeholder", "users:\n- name: eks\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: aws\n      args: [\"eks\", \"get-token\", \"--cluster-name\", \"prod\"]"),
    ("placeholder", "{\"type\": \"external_account\", \"audience\": \"//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/gh/providers/gh\", \"subject_token_type\": \"urn:ietf:params:oauth:token-type:jwt\", \"credential_source\": {\"file\": \"/var/run/secrets/token\"}}"),
    ("placeholder", "[pypi]\nusername = __token__\n# password comes from keyring"),
    ("placeholder", "machine github.com login ann-lee password ${GITHUB_TOKEN}"),
    ("placeholder", "PrivateKey = <contents of /etc/wireguard/private.key>"),
    ("placeholder", "private_key: \"-----BEGIN PRIVATE KEY-----\\n...\\n-----END PRIVATE KEY-----\\n\""),
    ("placeholder", "-----BEGIN OPENSSH PRIVATE KEY-----\n<your key here>\n-----END OPENSSH PRIVATE KEY-----"),
    ("placeholder", "Cookie: sessionid=<session-id>"),
    ("placeholder", "token: \"{{ lookup('env', 'VAULT_TOKEN') }}\""),
    ("fixture", "FAKE_GITHUB_TOKEN = \"ghp_000000000000000000000000000000000000\""),
    ("fixture", "const fakeKey = 'AKIA0000000000000000';"),
    ("fixture", "\"api_key\": \"test-api-key-not-real\""),
    ("fixture", "password: \"fake-password-for-tests\""),
    ("fixture", "mock_token = \"dummy-token\""),
    ("fixture", "STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx"),
    ("fixture", "DATABASE_URL=postgres://user:password@localhost:5432/test_db"),
    ("fixture", "\"private_key\": \"-----BEGIN PRIVATE KEY-----\\nFAKE\\n-----END PRIVATE KEY-----\\n\""),
    # redacted or masked values
    ("redacted", "password: \"****\""),
    ("redacted", "Authorization: Bearer <redacted>"),
    ("redacted", "token=[REDACTED]"),
    ("redacted", "\"api_key\": \"sk-...a1B2\""),
    ("redacted", "AWS_ACCESS_KEY_ID=AKIA****************"),
    ("redacted", "GITHUB_TOKEN=ghp_************************************"),
    ("redacted", "DATABASE_URL=postgres://app:***@db:5432/app"),
    ("redacted", "https://deploy:xxxxx@nexus.acme.io/repository/"),
    ("redacted", "password=<hidden>"),
    ("redacted", "{\"password\": \"[FILTERED]\", \"email\": \"ann@acme.io\"}"),
    ("redacted", "Parameters: {\"user\"=>{\"email\"=>\"ann@acme.io\", \"password\"=>\"[FILTERED]\"}}"),
    ("redacted", "authorization: \"REDACTED\""),
    ("redacted", "Cookie: <omitted>"),
    ("redacted", "-----BEGIN RSA PRIVATE KEY-----\n[redacted]\n-----END RSA PRIVATE KEY-----"),
    ("redacted", "https://bucket.s3.amazonaws.com/f.csv?X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED"),
    ("redacted", "&sig=***&se=2026-12-31"),
    ("redacted", "client_secret: \"••••••••\""),
    ("redacted", "Using token ghp_...XyZ9 (expires in 29 days)"),
    ("redacted", "x-api-key: sk-ant-...****"),
    ("redacted", "mysql -u root -p****** shop"),
    ("redacted", "Set-Cookie: session=deleted; expires=Thu, 01 Jan 1970 00:00:00 GMT"),
    ("redacted", "password: !!binary \"\" # set at deploy"),
    # URLs and connection strings without a secret
    ("url", "https://acme.io/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=dec-2026"),
    ("url", "https://www.youtube.com/watch?v=«~ytid»&t=42s"),
    ("url", "https://login.acme.io/authorize?response_type=code&client_id=web-app&redirect_uri=https%3A%2F%2Facme.io%2Fcb&scope=openid%20profile&state=«~state»&code_challenge=«~pkce»&code_challenge_method=S256"),
    ("url", "https://api.acme.io/v1/users?page=3&per_page=50&sort=-created_at"),
    ("url", "https://cdn.acme.io/assets/app.js?v=«~short»"),
    ("url", "https://acme-public.s3.amazonaws.com/logos/acme.png"),
    ("url", "postgres://app@db.acme.internal:5432/orders?sslmode=verify-full&sslrootcert=/etc/ssl/ca.pem"),
    ("url", "mongodb://mongo-0:27017,mongo-1:27017,mongo-2:27017/?replicaSet=rs0&readPreference=secondary"),
    ("url", "redis://cache.acme.internal:6379/2"),
    ("url", "amqp://rabbitmq:5672/%2F"),
    ("url", "jdbc:postgresql://db:5432/app?ssl=true&sslmode=require&ApplicationName=orders"),
    ("url", "git@github.com:acme/infra.git"),
    ("url", "ssh://git@gitlab.acme.io:2222/acme/web.git"),
    ("url", "https://ann-lee@bitbucket.org/acme/mobile.git"),
    ("url", "https://github.com/acme/web/blob/«~sha1»/src/auth/token.ts#L42"),
    ("url", "https://acme.io/reset-password?email=ann%40acme.io&expired=true"),
    ("url", "https://api.acme.io/oauth/token?grant_type=client_credentials&token_type=bearer"),
    ("url", "https://acme-exports.s3.amazonaws.com/report.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20261207T101500Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host"),
    ("url", "https://app.acme.io/invite?team=platform&role=viewer&ref=«~an12»"),
    ("url", "file:///home/ann/.ssh/id_ed25519"),
    ("url", "Server=sql01;Database=erp;Integrated Security=SSPI;TrustServerCertificate=True"),
    ("url", "Server=tcp:acme.database.windows.net,1433;Database=erp;Authentication=Active Directory Default;"),
    ("url", "host=db port=5432 dbname=orders user=app sslmode=require"),
    ("url", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"),
    # commands that carry no secret
    ("shell", "  901  mysql -h db -u root -p shop"),
    ("shell", "  902  read -rs DB_PASSWORD && export DB_PASSWORD"),
    ("shell", "  903  ssh-keygen -t ed25519 -C \"ann@acme.io\" -f ~/.ssh/id_ed25519"),
    ("shell", "  904  openssl rand -hex 32"),
    ("shell", "  905  kubectl get secret db -o jsonpath='{.data.password}' | base64 -d"),
    ("shell", "  906  unset AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN"),
    ("shell", "  907  git config --global credential.helper store"),
    ("shell", "  908  htpasswd -c /etc/nginx/.htpasswd admin"),
    ("shell", "  909  sshpass -f ~/.ssh/pw.txt ssh deploy@10.0.0.12"),
    ("shell", "  910  docker run -e POSTGRES_PASSWORD_FILE=/run/secrets/db_password postgres:16"),
    ("shell", "  911  vault kv get -field=password secret/prod/db"),
    ("shell", "  912  aws configure --profile ci"),
    ("shell", "  913  gpg --export --armor ann@acme.io > ann.pub.asc"),
    ("shell", "  914  cat ~/.ssh/id_ed25519.pub | pbcopy"),
    ("shell", "  915  passwd deploy"),
    ("shell", "  916  mysql --defaults-extra-file=~/.my.cnf -e 'SHOW DATABASES'"),
    ("shell", "  917  export HISTIGNORE='*PASSWORD*:*TOKEN*'"),
    ("shell", "  918  gh auth status --show-token=false"),
    # errors that name a secret without holding it
    ("error", "java.sql.SQLException: Access denied for user 'app'@'10.0.3.7' (using password: YES)"),
    ("error", "psycopg2.OperationalError: connection to server at \"db\" (10.0.3.7), port 5432 failed: FATAL:  password authentication failed for user \"app\""),
    ("error", "{\"error\": \"invalid_token\", \"error_description\": \"The access token expired\"}"),
    ("error", "WWW-Authenticate: Bearer realm=\"api\", error=\"invalid_token\", error_description=\"The token is malformed\""),
    ("error", "KeyError: 'OPENAI_API_KEY'"),
    ("error", "botocore.exceptions.NoCredentialsError: Unable to locate credentials"),
    ("error", "jwt.exceptions.ExpiredSignatureError: Signature has expired"),
    ("error", "deploy@10.0.0.12: Permission denied (publickey,password)."),
    ("error", "remote: Invalid username or token. Password authentication is not supported for Git operations.\nfatal: Authentication failed for 'https://github.com/acme/infra.git/'"),
    ("error", "Error: error:1E08010C:DECODER routines::unsupported (bad private key passphrase?)"),
    ("error", "WARN Secret 'stripe-api-key' not found in namespace 'payments'"),
    ("error", "HTTP/1.1 401 Unauthorized\nContent-Type: application/json\n\n{\"message\": \"Bad credentials\", \"documentation_url\": \"https://docs.github.com/rest\"}"),
    ("error", "ERROR: password must be at least 12 characters and contain a digit"),
    # cookies and headers that are no secret
    ("cookie", "Cookie: _ga=«~ga»; _gid=GA1.2.998877.1796000000; cookie_consent=accepted; theme=dark"),
    ("cookie", "Set-Cookie: lang=de-DE; Path=/; Max-Age=31536000; SameSite=Lax"),
    ("cookie", "Set-Cookie: sessionid=; expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/"),
    ("header", "> GET /v1/status HTTP/2\n> Host: api.acme.io\n> user-agent: curl/8.5.0\n> accept: */*"),
    ("header", "Accept-Encoding: gzip, deflate, br\nCache-Control: no-cache\nIf-None-Match: W/\"«~md5»\""),
    ("header", "{\"name\": \"X-Request-Id\", \"value\": \"«~uuid»\"}"),
    ("header", "{\"key\": \"baseUrl\", \"value\": \"https://api.acme.io\", \"enabled\": true}"),
    ("header", "Authorization: Bearer"),
    # locale files and schemas
    ("i18n", "\"password\": \"Mật khẩu\""),
    ("i18n", "password: Fjalëkalimi"),
    ("i18n", "\"password\": \"Pasahitza\","),
    ("i18n", "login.password=Wagwoord"),
    ("i18n", "\"password\" = \"Lykilorð\";"),
    ("i18n", "  password: Cyfrinair\n  username: Enw defnyddiwr"),
    ("i18n", "\"token\": \"Toegangstoken\""),
    ("i18n", "\"accessToken\": \"Zugangstoken\","),
    ("i18n", "\"apiKey\": \"Chiave API\""),
    ("i18n", "password-label = Pasvorto"),
    ("i18n", "<string name=\"password\">Contrasenya</string>"),
    ("i18n", "\"passwordHint\": \"Introduce tu contraseña\""),
    ("i18n", "\"password_too_short\": \"Das Passwort muss mindestens 8 Zeichen lang sein\""),
    ("i18n", "\"invalid_token\": \"Le jeton est invalide ou a expiré\""),
    ("i18n", "\"secret\": \"Salaisuus\""),
    ("schema", "\"password\": {\"type\": \"string\", \"format\": \"password\", \"writeOnly\": true, \"minLength\": 12}"),
    ("schema", "components:\n  securitySchemes:\n    bearerAuth:\n      type: http\n      scheme: bearer\n      bearerFormat: JWT"),
    ("schema", "    ApiKeyAuth:\n      type: apiKey\n      in: header\n      name: X-API-Key"),
    ("schema", "model User {\n  id       Int    @id @default(autoincrement())\n  password String\n  apiToken String? @unique\n}"),
    ("schema", "password_hash VARCHAR(255) NOT NULL,\napi_token CHAR(64) UNIQUE"),
    ("schema", "password: { type: String, required: true, select: false, minlength: 12 },"),
    ("schema", "password: z.string().min(12).regex(/[0-9]/),"),
    ("schema", "message Credentials {\n  string api_key = 1;\n  bytes private_key = 2;\n}"),
    ("schema", "{\"name\": \"token\", \"type\": [\"null\", \"string\"], \"default\": null}"),
    ("schema", "variable \"db_password\" {\n  type      = string\n  sensitive = true\n}"),
    ("schema", "api_key: SecretStr = Field(..., alias=\"API_KEY\")"),
    ("schema", "password = models.CharField(max_length=128)"),
    ("schema", "@Column({ select: false })\npassword: string;"),
    ("schema", "<input type=\"password\" name=\"password\" autocomplete=\"current-password\" required>"),
    ("schema", "\"token\": {\"type\": \"string\", \"pattern\": \"^[A-Za-z0-9_-]{40}$\"}"),
    ("schema", "private_key:\n  description: PEM-encoded private key\n  type: string\n  x-sensitive: true"),
]


def main():
    R.seed(2405)
    h.write_interleaved([(k, t) for k, t in POS], NEG)


h.fill = fill

if __name__ == "__main__":
    main()
