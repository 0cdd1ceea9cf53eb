import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { cardsHtml } from "~/components/card-fragments.server";
import type { CardData, CardsIn } from "~/components/image-card";
import { StaticCardItem, type StaticCardsProps } from "~/components/static-cards";

/** The list as React renders it card by card, with the page's own `from`: what a kept fragment must equal. */
const direct = ({ cards, from, cardsIn, isSelected }: StaticCardsProps) =>
  cards
    .map((card) =>
      renderToStaticMarkup(createElement(StaticCardItem, { card, from, cardsIn, checked: isSelected ? isSelected(card.id) : null })),
    )
    .join("");

const card = (id: number, title = `Shelf ${id}`): CardData => ({
  id,
  title,
  keywords: ["aisle", `k${id}`],
  thumbKey: `thumbs/ab/${id}.webp`,
});

const places: (CardsIn | undefined)[] = [
  { context: { kind: "project" }, canEdit: true },
  { context: { kind: "project" }, canEdit: false },
  { context: { kind: "board", boardId: "b'1&2", path: "/board/b'1&2" }, canEdit: true },
  undefined,
];
const froms = ["/client/7", "/client/7?tags=o'neil&after=abc", '/search/keyword/caf%C3%A9?x=<b>"q"</b>', "/client/7?tags=%01from%01"];

describe("the grid's cards from kept fragments", () => {
  it("writes exactly what rendering each card with the page's own URL writes, for every place, tick and URL", () => {
    const cards = [card(1), card(2, 'O\'Neil & <Sons> "best"'), card(3, "")];
    for (const cardsIn of places)
      for (const from of froms)
        for (const isSelected of [null, (id: number) => id === 2]) {
          const props = { cards, from, cardsIn, isSelected };
          // Twice: the first renders and keeps, the second answers from what was kept.
          expect(cardsHtml(props)).toBe(direct(props));
          expect(cardsHtml(props)).toBe(direct(props));
        }
  });

  it("serves a card kept on one page to another page with its URL, never the first page's", () => {
    const cards = [card(10)];
    const first = cardsHtml({ cards, from: "/client/7?tags=red", isSelected: null });
    const second = cardsHtml({ cards, from: "/client/7?tags=blue", isSelected: null });
    expect(first).toContain(encodeURIComponent("/client/7?tags=red"));
    expect(second).toContain(encodeURIComponent("/client/7?tags=blue"));
    expect(second).not.toContain("red");
  });

  it("renders a card anew when its data, its tick or its place changes: nothing kept is stale", () => {
    const from = "/client/7";
    const before = cardsHtml({ cards: [card(20, "Before")], from, isSelected: null });
    const after = cardsHtml({ cards: [card(20, "After")], from, isSelected: null });
    expect(before).toContain("Before");
    expect(after).toContain("After");
    expect(after).not.toContain("Before");
    const unticked = cardsHtml({ cards: [card(20)], from, isSelected: () => false });
    const ticked = cardsHtml({ cards: [card(20)], from, isSelected: () => true });
    expect(unticked).not.toContain("checked");
    expect(ticked).toContain('checked=""');
    const editor = cardsHtml({ cards: [card(20)], from, cardsIn: places[0], isSelected: null });
    const viewer = cardsHtml({ cards: [card(20)], from, cardsIn: places[1], isSelected: null });
    expect(editor).toContain("/image/20/delete");
    expect(viewer).not.toContain("/image/20/delete");
  });
});
