#!/usr/bin/env python3
"""An OTLP/HTTP receiver on loopback, and a check of what it received against stall reports.

  otlp-receiver.py serve <port-file> <received.jsonl>
      Listens on 127.0.0.1 (a free port, written to <port-file> once listening) for OTLP/HTTP
      exports (POST /v1/metrics, /v1/logs, /v1/traces; protobuf or JSON, gzip or not), decodes
      each request with the official opentelemetry-proto package, answers as the protocol says
      and appends one JSON line per request to <received.jsonl>, until SIGTERM.
  otlp-receiver.py check <received.jsonl> <report-directory> <service-name>
      Compares the metrics and log records received with the stall reports in the directory:
      one log record per report (its fingerprint and duration in attributes), the stall counter
      and duration histogram counting each report, under the service's name. Exit 0 when they
      agree, 1 (with what differs) when not, 2 on unreadable input.

Used by Scripts/otel-demo (Examples/OpenTelemetry).
"""
import gzip
import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

SIGNALS = {
    "/v1/metrics": ("metrics", metrics_service_pb2.ExportMetricsServiceRequest, metrics_service_pb2.ExportMetricsServiceResponse),
    "/v1/logs": ("logs", logs_service_pb2.ExportLogsServiceRequest, logs_service_pb2.ExportLogsServiceResponse),
    "/v1/traces": ("traces", trace_service_pb2.ExportTraceServiceRequest, trace_service_pb2.ExportTraceServiceResponse),
}


def serve(port_file, received_path):
    received = open(received_path, "a", encoding="utf-8")
    writing = threading.Lock()  # the server answers each request on a thread of its own

    def record(entry):
        with writing:
            received.write(json.dumps(entry) + "\n")
            received.flush()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format, *args):  # quiet: the check says what arrived
            pass

        def do_POST(self):
            entry = SIGNALS.get(self.path)
            if entry is None:
                self.send_error(404, "not an OTLP/HTTP path")
                return
            name, request_type, response_type = entry
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding", "").lower() == "gzip":
                body = gzip.decompress(body)
            is_json = self.headers.get("Content-Type", "").startswith("application/json")
            request = request_type()
            try:
                if is_json:
                    json_format.Parse(body, request)
                else:
                    request.ParseFromString(body)
            except Exception as error:  # a malformed export: said to the exporter, kept for the check
                record({"signal": name, "error": str(error)})
                self.send_error(400, "undecodable OTLP request")
                return
            record({"signal": name, "request": json_format.MessageToDict(request)})
            response = response_type()
            payload = json_format.MessageToJson(response).encode() if is_json else response.SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/json" if is_json else "application/x-protobuf")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    def stop(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    temporary = port_file + ".tmp"
    with open(temporary, "w") as file:
        file.write(str(server.server_address[1]))
    os.replace(temporary, port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        received.close()


def attributes(items):
    """OTLP KeyValue list (as MessageToDict gives it) to a dict of plain values."""
    values = {}
    for item in items or []:
        value = item.get("value", {})
        for kind in ("stringValue", "intValue", "doubleValue", "boolValue"):
            if kind in value:
                values[item["key"]] = value[kind]
    return values


def check(received_path, report_directory, service_name):
    try:
        lines = [json.loads(line) for line in open(received_path, encoding="utf-8") if line.strip()]
    except (OSError, ValueError) as error:
        print(f"otlp-receiver check: {received_path}: {error}", file=sys.stderr)
        return 2
    reports = []
    for name in sorted(os.listdir(report_directory)):
        if name.startswith("stall-") and name.endswith(".json"):
            path = os.path.join(report_directory, name)
            try:
                reports.append(json.load(open(path, encoding="utf-8")))
            except (OSError, ValueError) as error:
                print(f"otlp-receiver check: {path}: {error}", file=sys.stderr)
                return 2
    problems = [f"{line['signal']}: an undecodable request ({line['error']})" for line in lines if "error" in line]
    if not reports:
        problems.append(f"no stall reports in {report_directory}")

    services = set()
    log_records = []
    stall_counts = {}      # attribute set -> last cumulative value
    histograms = {}        # attribute set -> (count, sum)
    for line in lines:
        request = line.get("request", {})
        for resource in request.get("resourceMetrics", []) + request.get("resourceLogs", []):
            services.add(attributes(resource.get("resource", {}).get("attributes")).get("service.name"))
        for resource in request.get("resourceLogs", []):
            for scope in resource.get("scopeLogs", []):
                log_records += scope.get("logRecords", [])
        for resource in request.get("resourceMetrics", []):
            for scope in resource.get("scopeMetrics", []):
                for metric in scope.get("metrics", []):
                    if metric["name"] == "stallmonitor.stalls":
                        for point in metric.get("sum", {}).get("dataPoints", []):
                            key = json.dumps(attributes(point.get("attributes")), sort_keys=True)
                            value = float(point.get("asInt", point.get("asDouble", 0)))
                            stall_counts[key] = max(stall_counts.get(key, 0), value)
                    if metric["name"] == "stallmonitor.stall.duration":
                        for point in metric.get("histogram", {}).get("dataPoints", []):
                            key = json.dumps(attributes(point.get("attributes")), sort_keys=True)
                            count = int(point.get("count", 0))
                            if count >= histograms.get(key, (0, 0))[0]:
                                histograms[key] = (count, float(point.get("sum", 0)))

    if service_name not in services:
        problems.append(f"no export names the service {service_name!r} (seen: {sorted(map(str, services))})")

    # One log record per report, with the report's facts in its attributes.
    by_fingerprint = {}
    for record in log_records:
        facts = attributes(record.get("attributes"))
        if "stallmonitor.fingerprint" in facts:
            by_fingerprint.setdefault(facts["stallmonitor.fingerprint"], []).append((record, facts))
    for report in reports:
        matches = by_fingerprint.get(report["fingerprint"], [])
        duration = str(int(round(report["durationMs"])))
        if not any(facts.get("stallmonitor.durationMs") == duration for _, facts in matches):
            problems.append(f"no log record for the report {report['fingerprint']} ({duration} ms)")
    stall_records = sum(len(matches) for matches in by_fingerprint.values())
    if stall_records != len(reports):
        problems.append(f"{stall_records} stall log records for {len(reports)} reports")

    # The counter and the histogram count each report once, by loop kind and classification.
    expected = {}
    for report in reports:
        key = (report["loop"]["kind"], report["classification"])
        expected[key] = expected.get(key, 0) + 1
    counted = {}
    for key, value in stall_counts.items():
        facts = json.loads(key)
        kind = (facts.get("loop.kind"), facts.get("classification"))
        counted[kind] = counted.get(kind, 0) + value
    if {key: int(value) for key, value in counted.items()} != expected:
        problems.append(f"stallmonitor.stalls counted {counted}, the reports say {expected}")
    histogram_count = sum(count for count, _ in histograms.values())
    histogram_sum = sum(total for _, total in histograms.values())
    report_seconds = sum(report["durationMs"] for report in reports) / 1000
    if histogram_count != len(reports):
        problems.append(f"stallmonitor.stall.duration counted {histogram_count} values for {len(reports)} reports")
    elif abs(histogram_sum - report_seconds) > 0.001 * len(reports):
        problems.append(f"stallmonitor.stall.duration sums to {histogram_sum:.4f} s, the reports to {report_seconds:.4f} s")

    print(f"received {len(lines)} OTLP requests: {len(log_records)} log records, "
          f"{stall_records} of them stall reports; stallmonitor.stalls {dict(sorted((f'{k[0]}/{k[1]}', int(v)) for k, v in counted.items()))}; "
          f"stallmonitor.stall.duration {histogram_count} values, {histogram_sum:.3f} s")
    print(f"reports in {report_directory}: {len(reports)} ({', '.join(sorted(f'{k[0]}/{k[1]}' for k in expected))}), {report_seconds:.3f} s")
    for problem in problems:
        print(f"MISMATCH: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
