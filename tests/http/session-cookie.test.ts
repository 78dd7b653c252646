import { describe, expect, test } from "bun:test";
import { cookieValue } from "../../src/http/auth-guard";

// The auth guard reads svc_session from the Cookie header itself (issue 15: no cookie jar per
// request); it must read it as Elysia's parser did.
describe("cookieValue", () => {
  test("finds the named cookie among others, spaces around it ignored", () => {
    expect(cookieValue("a=1; svc_session=tok.en-1_x ;b=2", "svc_session")).toBe("tok.en-1_x");
    expect(cookieValue("svc_session=first", "svc_session")).toBe("first");
  });
  test("the first of two cookies of that name wins", () => {
    expect(cookieValue("svc_session=one; svc_session=two", "svc_session")).toBe("one");
  });
  test("a name that only ends or starts the same is another cookie", () => {
    expect(cookieValue("xsvc_session=a; svc_session_old=b", "svc_session")).toBeUndefined();
    expect(cookieValue("xsvc_session=a; svc_session=c", "svc_session")).toBe("c");
  });
  test("quotes and percent-escapes are undone; a bad escape stays as sent", () => {
    expect(cookieValue('svc_session="quoted"', "svc_session")).toBe("quoted");
    expect(cookieValue("svc_session=a%20b", "svc_session")).toBe("a b");
    expect(cookieValue("svc_session=100%", "svc_session")).toBe("100%");
  });
  test("missing, empty and malformed headers give nothing or the empty value", () => {
    expect(cookieValue(null, "svc_session")).toBeUndefined();
    expect(cookieValue("", "svc_session")).toBeUndefined();
    expect(cookieValue("svc_session", "svc_session")).toBeUndefined();
    expect(cookieValue("svc_session=", "svc_session")).toBe("");
  });
  test("a value with = inside keeps it", () => {
    expect(cookieValue("svc_session=a=b=", "svc_session")).toBe("a=b=");
  });
});
