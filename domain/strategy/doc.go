// Package strategy holds the built-in trading algorithms (gain, stepgrid,
// manual) and the indicators they read (EMA, Bollinger bands, RSI). A
// Strategy is pure: Decide looks at one pair's PairState and its
// domain.StrategyParams and returns the orders to request, never touching
// an exchange or a clock; ResolveStrategy names the algorithm a configured
// strategy runs, ENOTFOUND when there is none (a custom JavaScript
// strategy). Standard library and domain only.
package strategy
