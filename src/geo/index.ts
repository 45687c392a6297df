/** GeoIP: country/region/city of a client IP from an MMDB file, continents. Other modules import this file only. */
export { CONTINENTS, continentOfCountry } from './continents'
export { UNKNOWN_LOCATION, createGeoIp, type GeoIp } from './geoip'
