import { describe, expect, it } from "vitest";
import { sniffImageType } from "~/services/image-files.server";
import { gif, jpeg, png, tiff, webp } from "../helpers/images";

describe("sniffImageType", () => {
  it("knows the allowed types by their bytes", async () => {
    expect(sniffImageType(await jpeg())?.mime).toBe("image/jpeg");
    expect(sniffImageType(await png())?.mime).toBe("image/png");
    expect(sniffImageType(await webp())?.mime).toBe("image/webp");
    expect(sniffImageType(await gif())?.mime).toBe("image/gif");
    expect(sniffImageType(await tiff())?.mime).toBe("image/tiff");
  });
  it("refuses SVG, HTML, text and empty input whatever the name", () => {
    for (const text of [
      '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
      "<!doctype html><html><script>alert(1)</script></html>",
      "just some text, not an image",
      "",
    ])
      expect(sniffImageType(Buffer.from(text))).toBeNull();
  });
});
