# SPDX-License-Identifier: Apache-2.0
"""Checks HTTP exchanges against Firecracker's OpenAPI (Swagger 2.0)
description: the path and method exist, the request body validates
against the body parameter's schema, the status is declared (or a
`default` covers it) and the response body validates against that
response's schema."""
import json
import re

import jsonschema
import yaml


class Spec:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.doc = yaml.safe_load(f)
        self.defs = self.doc["definitions"]
        self.paths = []
        for tmpl, ops in self.doc["paths"].items():
            rx = "^" + re.sub(r"\{[^}]+\}", "[^/]+", tmpl) + "$"
            self.paths.append((re.compile(rx), tmpl, ops))

    def operation(self, method, path):
        for rx, tmpl, ops in self.paths:
            if rx.match(path):
                return tmpl, ops.get(method.lower())
        return None, None

    def _check(self, schema, value, what):
        full = dict(schema)
        full["definitions"] = self.defs
        try:
            jsonschema.Draft4Validator(full).validate(value)
        except jsonschema.ValidationError as e:
            return [f"{what}: {e.message}"]
        return []

    def request_errors(self, method, path, body):
        """Problems of a request: [] if it conforms."""
        tmpl, op = self.operation(method, path)
        if op is None:
            return [f"{method} {path}: no such path and method in the description"]
        errs = []
        for p in op.get("parameters", []):
            if p.get("in") != "body":
                continue
            if body is None:
                if p.get("required"):
                    errs.append(f"{method} {tmpl}: body required")
                continue
            errs += self._check(p["schema"], body, f"{method} {tmpl} request")
        return errs

    def response_errors(self, method, path, status, body):
        """Problems of a response: [] if it conforms."""
        tmpl, op = self.operation(method, path)
        if op is None:
            # An unknown path: Firecracker answers 400 with its Error object.
            if status != 400:
                return [f"{method} {path}: unknown path answered {status}, not 400"]
            return self._check({"$ref": "#/definitions/Error"}, body, "error body")
        responses = op["responses"]
        r = responses.get(status, responses.get(str(status)))
        if r is None:
            if status < 400 or "default" not in responses:
                return [f"{method} {tmpl}: status {status} not declared"]
            r = responses["default"]
        if "schema" not in r:
            if body is not None:
                return [f"{method} {tmpl}: {status} declares no body but got {body!r}"]
            return []
        if body is None:
            return [f"{method} {tmpl}: {status} declares a body, got none"]
        return self._check(r["schema"], without_nulls(body), f"{method} {tmpl} {status} response")


def without_nulls(v):
    """Firecracker's server writes an absent optional field (serde's None)
    as null, which its description (Swagger 2.0: no null) leaves out."""
    if isinstance(v, dict):
        return {k: without_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [without_nulls(x) for x in v]
    return v


def body_json(raw):
    """The JSON of a body, None if empty; ValueError if not JSON."""
    if not raw:
        return None
    return json.loads(raw)
