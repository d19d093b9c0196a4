// A "copy link" button sits inside a follow-up's <summary>: a click on it must copy the link (Material's
// clipboard integration handles [data-clipboard-text]) without also opening or closing the block.
document.addEventListener("click", function (event) {
  if (event.target.closest && event.target.closest(".msib-copy-link")) event.preventDefault();
}, true);
