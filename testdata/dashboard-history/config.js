module.exports = {
  "pairs": {
    "binance": {
      "USDT-BTC": { "strategy": "manual", "enabled": true, "override": {} },
      "USDT-ETH": { "strategy": "manual", "enabled": true, "override": {} }
    }
  },
  "strategies": {
    "manual": { "STRATEGY": "manual" }
  },
  "exchanges": {
    "binance": { "isEncrypted": false, "delay": 5 }
  },
  "bot": {
    "service_wallet": "0xdashboard0000000000000000000000000001",
    "SIMULATOR": true
  },
  "GUI": {}
};
