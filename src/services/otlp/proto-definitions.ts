/**
 * The OTLP trace messages in proto3 syntax, for protobufjs to parse.
 *
 * Provenance: the message, field and enum names, numbers and types are those of the official
 * definitions in https://github.com/open-telemetry/opentelemetry-proto (Apache-2.0, Copyright
 * The OpenTelemetry Authors), files
 *   opentelemetry/proto/common/v1/common.proto
 *   opentelemetry/proto/resource/v1/resource.proto
 *   opentelemetry/proto/trace/v1/trace.proto
 *   opentelemetry/proto/collector/trace/v1/trace_service.proto
 *   opentelemetry/proto/logs/v1/logs.proto
 *   opentelemetry/proto/collector/logs/v1/logs_service.proto
 * restated here without their comments because no installed package ships those files. Left out
 * as not needed to read spans and logs (protobuf skips unknown fields): `TracesData`,
 * `LogsData`, the `SpanFlags` and `LogRecordFlags` enums, `Resource.entity_refs` and
 * `EntityRef` (development status). Written with the official
 * package names, so that the decoder reads exactly what the SDKs write; the tests check this
 * against the OpenTelemetry JS SDK's own encoder and response decoder.
 */

/**
 * The envelope trace.proto and logs.proto share: Resource<Signal> holds Scope<Signal>s, each
 * holding the records (`record` is their type and field name, e.g. `Span spans`).
 */
function envelope(signal: 'Spans' | 'Logs', record: string): string {
  return `message Resource${signal} {
  reserved 1000;
  opentelemetry.proto.resource.v1.Resource resource = 1;
  repeated Scope${signal} scope_${signal.toLowerCase()} = 2;
  string schema_url = 3;
}
message Scope${signal} {
  opentelemetry.proto.common.v1.InstrumentationScope scope = 1;
  repeated ${record} = 2;
  string schema_url = 3;
}`
}

/** The request, response and partial success of a collector service (trace_service.proto, logs_service.proto). */
function exportService(
  pkg: 'trace' | 'logs',
  name: 'Trace' | 'Logs',
  signal: 'Spans' | 'Logs',
  rejected: string,
): string {
  return `
syntax = "proto3";
package opentelemetry.proto.collector.${pkg}.v1;

message Export${name}ServiceRequest {
  repeated opentelemetry.proto.${pkg}.v1.Resource${signal} resource_${signal.toLowerCase()} = 1;
}
message Export${name}ServiceResponse {
  Export${name}PartialSuccess partial_success = 1;
}
message Export${name}PartialSuccess {
  int64 ${rejected} = 1;
  string error_message = 2;
}
`
}

export const COMMON_PROTO = `
syntax = "proto3";
package opentelemetry.proto.common.v1;

message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue {
  string key = 1;
  AnyValue value = 2;
}
message InstrumentationScope {
  string name = 1;
  string version = 2;
  repeated KeyValue attributes = 3;
  uint32 dropped_attributes_count = 4;
}
`

export const RESOURCE_PROTO = `
syntax = "proto3";
package opentelemetry.proto.resource.v1;

message Resource {
  repeated opentelemetry.proto.common.v1.KeyValue attributes = 1;
  uint32 dropped_attributes_count = 2;
}
`

export const TRACE_PROTO = `
syntax = "proto3";
package opentelemetry.proto.trace.v1;

${envelope('Spans', 'Span spans')}
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  fixed32 flags = 16;
  string name = 5;
  enum SpanKind {
    SPAN_KIND_UNSPECIFIED = 0;
    SPAN_KIND_INTERNAL = 1;
    SPAN_KIND_SERVER = 2;
    SPAN_KIND_CLIENT = 3;
    SPAN_KIND_PRODUCER = 4;
    SPAN_KIND_CONSUMER = 5;
  }
  SpanKind kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated opentelemetry.proto.common.v1.KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10;
  message Event {
    fixed64 time_unix_nano = 1;
    string name = 2;
    repeated opentelemetry.proto.common.v1.KeyValue attributes = 3;
    uint32 dropped_attributes_count = 4;
  }
  repeated Event events = 11;
  uint32 dropped_events_count = 12;
  message Link {
    bytes trace_id = 1;
    bytes span_id = 2;
    string trace_state = 3;
    repeated opentelemetry.proto.common.v1.KeyValue attributes = 4;
    uint32 dropped_attributes_count = 5;
    fixed32 flags = 6;
  }
  repeated Link links = 13;
  uint32 dropped_links_count = 14;
  Status status = 15;
}
message Status {
  reserved 1;
  string message = 2;
  enum StatusCode {
    STATUS_CODE_UNSET = 0;
    STATUS_CODE_OK = 1;
    STATUS_CODE_ERROR = 2;
  }
  StatusCode code = 3;
}
`

export const TRACE_SERVICE_PROTO = exportService('trace', 'Trace', 'Spans', 'rejected_spans')

export const LOGS_PROTO = `
syntax = "proto3";
package opentelemetry.proto.logs.v1;

${envelope('Logs', 'LogRecord log_records')}
enum SeverityNumber {
  SEVERITY_NUMBER_UNSPECIFIED = 0;
  SEVERITY_NUMBER_TRACE = 1;
  SEVERITY_NUMBER_TRACE2 = 2;
  SEVERITY_NUMBER_TRACE3 = 3;
  SEVERITY_NUMBER_TRACE4 = 4;
  SEVERITY_NUMBER_DEBUG = 5;
  SEVERITY_NUMBER_DEBUG2 = 6;
  SEVERITY_NUMBER_DEBUG3 = 7;
  SEVERITY_NUMBER_DEBUG4 = 8;
  SEVERITY_NUMBER_INFO = 9;
  SEVERITY_NUMBER_INFO2 = 10;
  SEVERITY_NUMBER_INFO3 = 11;
  SEVERITY_NUMBER_INFO4 = 12;
  SEVERITY_NUMBER_WARN = 13;
  SEVERITY_NUMBER_WARN2 = 14;
  SEVERITY_NUMBER_WARN3 = 15;
  SEVERITY_NUMBER_WARN4 = 16;
  SEVERITY_NUMBER_ERROR = 17;
  SEVERITY_NUMBER_ERROR2 = 18;
  SEVERITY_NUMBER_ERROR3 = 19;
  SEVERITY_NUMBER_ERROR4 = 20;
  SEVERITY_NUMBER_FATAL = 21;
  SEVERITY_NUMBER_FATAL2 = 22;
  SEVERITY_NUMBER_FATAL3 = 23;
  SEVERITY_NUMBER_FATAL4 = 24;
}
message LogRecord {
  reserved 4;
  fixed64 time_unix_nano = 1;
  fixed64 observed_time_unix_nano = 11;
  SeverityNumber severity_number = 2;
  string severity_text = 3;
  opentelemetry.proto.common.v1.AnyValue body = 5;
  repeated opentelemetry.proto.common.v1.KeyValue attributes = 6;
  uint32 dropped_attributes_count = 7;
  fixed32 flags = 8;
  bytes trace_id = 9;
  bytes span_id = 10;
  string event_name = 12;
}
`

export const LOGS_SERVICE_PROTO = exportService('logs', 'Logs', 'Logs', 'rejected_log_records')
