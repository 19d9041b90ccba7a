import { HttpResponse, http } from "msw";
import type { ExportTraceServiceRequest, OtlpAnyValue, OtlpSpan } from "../../src/telemetry/otlp-json";
import { llmServer } from "./server";

/**
 * An OTLP/HTTP traces receiver at `url` (POST JSON `ExportTraceServiceRequest`), answering each
 * request with the status `status()` gives — 200 with an empty `ExportTraceServiceResponse`, or
 * an error status with a `Status` body, as the OTLP/HTTP specification says. `partial` makes a
 * 200 a partial success: the response's `partialSuccess` (rejected spans, as an int64 string).
 */
export interface OtlpExport {
  headers: Record<string, string>;
  body: ExportTraceServiceRequest;
  /** What the receiver answered this one. */
  status: number;
}

export function fakeOtlpReceiver(
  url: string,
  status: () => number = () => 200,
  partial?: () => { rejectedSpans: string; errorMessage: string },
) {
  const exports: OtlpExport[] = [];
  llmServer.use(
    http.post(url, async ({ request }) => {
      if (request.headers.get("content-type") !== "application/json")
        return HttpResponse.json({ code: 3, message: "unsupported content type" }, { status: 415 });
      const answer = status();
      exports.push({
        headers: Object.fromEntries(request.headers),
        body: (await request.json()) as ExportTraceServiceRequest,
        status: answer,
      });
      return answer === 200
        ? HttpResponse.json(partial ? { partialSuccess: partial() } : {})
        : HttpResponse.json({ code: 14, message: "unavailable" }, { status: answer });
    }),
  );
  return {
    exports,
    /** The spans of the exports the receiver accepted. */
    accepted: () => exports.filter((e) => e.status === 200).flatMap(spansOf),
  };
}

export const spansOf = (e: OtlpExport): OtlpSpan[] =>
  e.body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));

/** A span's attribute as a plain value. */
export function attr(span: { attributes: { key: string; value: OtlpAnyValue }[] }, key: string): unknown {
  const value = span.attributes.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  return Object.values(value)[0];
}
