// Buys a little every cycle below the moving average; sells at 2% over the break-even.
const gb = module.exports = async function (gb) {
  const ma = gb.data.candlesClose.slice(-20).reduce((a, b) => a + b, 0) / 20
  if (gb.data.bid < ma && gb.data.quoteBalance > 20) {
    gb.method.buyMarket(20 / gb.data.bid, gb.data.pairName)
  } else if (gb.data.gotBag && gb.data.bid > gb.data.breakEven * 1.02) {
    gb.method.sellMarket(gb.data.quoteBalance, gb.data.pairName)
  }
}
